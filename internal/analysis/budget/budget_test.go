package budget

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
)

func TestOf(t *testing.T) {
	// 8 clients at 1,000 tps: 8 ms per transaction and client.
	cycle := ptr.To(8.0)
	client := Part{Name: "client", Threads: &report.Threads{WindowSeconds: 2, OnCPUSeconds: 0.5, WaitedSeconds: 0.1,
		BusiestSeconds: 0.5, Count: 1}}
	gateway := Part{Name: "gateway", Threads: &report.Threads{WindowSeconds: 2, OnCPUSeconds: 1.9, BusiestSeconds: 1.9, Count: 1}}
	server := Part{Name: "server", Threads: &report.Threads{WindowSeconds: 2, OnCPUSeconds: 4, WaitedSeconds: 2,
		BusiestSeconds: 0.6, Count: 12}}
	for _, tc := range []struct {
		name  string
		cycle *float64
		tps   float64
		parts []Part
		want  *benchv1.TimeBudget
	}{
		{name: "not a closed loop", cycle: nil, tps: 1000, parts: []Part{client}},
		{name: "no threads read", cycle: cycle, tps: 1000, parts: []Part{{Name: "client"}}},
		{name: "no window", cycle: cycle, tps: 1000, parts: []Part{{Name: "client", Threads: &report.Threads{OnCPUSeconds: 1}}}},
		{name: "shares by Little's law", cycle: cycle, tps: 1000, parts: []Part{client, gateway, server},
			want: &benchv1.TimeBudget{RoundTripMs: 8, UnattributedMs: 3.75, Parts: []benchv1.BudgetPart{
				{Part: "client", Ms: 0.3, OnCPUMs: 0.25, WaitedMs: 0.05, Threads: 1, BusiestThreadCores: 0.25},
				{Part: "gateway", Ms: 0.95, OnCPUMs: 0.95, Threads: 1, BusiestThreadCores: 0.95},
				{Part: "server", Ms: 3, OnCPUMs: 2, WaitedMs: 1, Threads: 12, BusiestThreadCores: 0.3},
			}}},
		{name: "nonsense is not a negative share", cycle: cycle, tps: 1000, parts: []Part{{Name: "client",
			Threads: &report.Threads{WindowSeconds: 2, OnCPUSeconds: -5, WaitedSeconds: 0.2, BusiestSeconds: -1, Count: -3}}},
			want: &benchv1.TimeBudget{RoundTripMs: 8, UnattributedMs: 7.9, Parts: []benchv1.BudgetPart{
				{Part: "client", Ms: 0.1, WaitedMs: 0.1}}}},
		{name: "past float64's range is left out", cycle: cycle, tps: 1000, parts: []Part{{Name: "client",
			Threads: &report.Threads{WindowSeconds: 1e-300, OnCPUSeconds: 1.7e308, Count: 1}}, client},
			want: &benchv1.TimeBudget{RoundTripMs: 8, UnattributedMs: 7.7, Parts: []benchv1.BudgetPart{
				{Part: "client", Ms: 0.3, OnCPUMs: 0.25, WaitedMs: 0.05, Threads: 1, BusiestThreadCores: 0.25}}}},
		{name: "a link's delay is its own, its threads inside it", cycle: ptr.To(11.0), tps: 400, parts: []Part{
			{Name: "link", Held: 4 * time.Second, HeldWindow: 1, HeldCoversThreads: true,
				Threads: &report.Threads{WindowSeconds: 1, OnCPUSeconds: 0.2, WaitedSeconds: 0.2, Count: 8}},
			{Name: "pooler", Held: 40 * time.Millisecond, HeldWindow: 1, Threads: &report.Threads{WindowSeconds: 1, OnCPUSeconds: 0.04}},
			{Name: "counted only", Held: 40 * time.Millisecond, HeldWindow: 1}},
			want: &benchv1.TimeBudget{RoundTripMs: 11, UnattributedMs: 0.7, Parts: []benchv1.BudgetPart{
				{Part: "link", Ms: 10, OnCPUMs: 0.5, WaitedMs: 0.5, HeldMs: 10, Threads: 8},
				{Part: "pooler", Ms: 0.2, OnCPUMs: 0.1, HeldMs: 0.1},
				{Part: "counted only", Ms: 0.1, HeldMs: 0.1}}}},
		{name: "more than the round trip is said", cycle: ptr.To(1.0), tps: 1000, parts: []Part{server},
			want: &benchv1.TimeBudget{RoundTripMs: 1, UnattributedMs: -2, Parts: []benchv1.BudgetPart{
				{Part: "server", Ms: 3, OnCPUMs: 2, WaitedMs: 1, Threads: 12, BusiestThreadCores: 0.3}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.cycle, tc.tps, tc.parts); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Of = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestLimiters(t *testing.T) {
	parts := []Part{
		{Name: "client", Threads: &report.Threads{WindowSeconds: 2, OnCPUSeconds: 0.5, BusiestSeconds: 0.5, Count: 1}},
		{Name: "tunnel-0", Threads: &report.Threads{WindowSeconds: 2, OnCPUSeconds: 1.2, WaitedSeconds: 0.2, BusiestSeconds: 1.2, Count: 1}},
		{Name: "gateway", Threads: &report.Threads{WindowSeconds: 2, OnCPUSeconds: 1.85, BusiestSeconds: 1.85, Count: 2}},
		{Name: "server", Threads: &report.Threads{WindowSeconds: 2, OnCPUSeconds: 1.9, BusiestSeconds: 1.9, Count: 9}},
	}
	// The first at a full core in the path's order, not the busiest; with or without a round trip.
	if l := FullCoreLimiter(parts); l == nil || l.Part != "gateway" || !strings.Contains(l.Evidence, "92%") {
		t.Errorf("FullCoreLimiter = %+v, want gateway at 92%%", l)
	}
	b := Of(ptr.To(8.0), 1000, parts)
	parts[2].Threads.BusiestSeconds, parts[3].Threads.BusiestSeconds = 1, 1
	if l := FullCoreLimiter(parts); l != nil {
		t.Errorf("FullCoreLimiter = %+v with no thread at a full core", l)
	}
	// A runner's made-up thread: more than the window is said as a full core, past float64's range
	// as nothing.
	if l := FullCoreLimiter([]Part{{Name: "x", Threads: &report.Threads{WindowSeconds: 2, BusiestSeconds: 5}}}); l == nil ||
		!strings.Contains(l.Evidence, "100%") {
		t.Errorf("a made-up busiest thread: %+v", l)
	}
	if l := FullCoreLimiter([]Part{{Name: "x", Threads: &report.Threads{WindowSeconds: 1e-300, BusiestSeconds: 1e300}}}); l != nil {
		t.Errorf("a busiest thread past float64's range: %+v", l)
	}
	b.Parts[1].HeldMs = 0.05
	if l := LatencyLimiter(b); l == nil || !strings.Contains(l.Evidence, "(9%: 0.05 held by it, 0.6 on a CPU") {
		t.Errorf("LatencyLimiter = %+v: want the link's delay said", l)
	}
	b.Parts[1].HeldMs = 0
	l := LatencyLimiter(b)
	want := "no part ran out; of the 8 ms round trip server 0.95 ms (12%: 0.95 on a CPU, 0 waiting for one), gateway 0.925 ms " +
		"(12%: 0.925 on a CPU, 0 waiting for one), tunnel-0 0.7 ms (9%: 0.6 on a CPU, 0.1 waiting for one); 5.17 ms (65%) was in " +
		"none of the measured parts' threads"
	if l == nil || l.Part != benchv1.PartLatency || !strings.HasPrefix(l.Evidence, want) {
		t.Errorf("LatencyLimiter = %+v\nwant evidence starting %q", l, want)
	}
	if FullCoreLimiter(nil) != nil || LatencyLimiter(nil) != nil {
		t.Error("a run without threads has no limiter from them")
	}
}
