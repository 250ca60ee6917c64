package chaosmesh

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRate: chaos-mesh's rate is bytes per second with ×1024 units; the conversion from bits per
// second is exact, never rounded.
func TestRate(t *testing.T) {
	tests := []struct {
		bits int64
		want string
	}{
		{50_000_000, "6250000bps"}, // 50 Mbit/s: 6,250,000 B/s, no ×1024 unit divides it
		{1_000_000_000, "125000000bps"},
		{100_000, "12500bps"},
		{8 * 1024, "1kbps"},
		{8 * 3 << 20, "3mbps"},
		{8 << 30, "1gbps"},
		{8 * 1536, "1536bps"},
	}
	for _, tt := range tests {
		if got := Rate(tt.bits); got != tt.want {
			t.Errorf("Rate(%d) = %q, want %q", tt.bits, got, tt.want)
		}
	}
}

func TestObjects(t *testing.T) {
	l := Link{Namespace: "db", Name: "bench-wan-r1", Source: map[string]string{"job-name": "bench-wan-r1"},
		Target: map[string]string{"cnpg.io/cluster": "pg"}, RTT: 20 * time.Millisecond, Jitter: 2 * time.Millisecond,
		BitsPerSecond: 50_000_000}
	objs := l.Objects()
	if len(objs) != 2 || objs[0].GetName() != "bench-wan-r1-delay" || objs[1].GetName() != "bench-wan-r1-bandwidth" {
		t.Fatalf("objects %v", objs)
	}
	delay, _, _ := unstructured.NestedStringMap(objs[0].Object, "spec", "delay")
	if delay["latency"] != "20ms" || delay["jitter"] != "2ms" {
		t.Errorf("delay %v", delay)
	}
	bw, _, _ := unstructured.NestedMap(objs[1].Object, "spec", "bandwidth")
	if bw["rate"] != "6250000bps" || bw["buffer"].(int64) < 62500 || bw["limit"].(int64) < 625000 {
		t.Errorf("bandwidth %v", bw)
	}
	for _, o := range objs {
		if d, _, _ := unstructured.NestedString(o.Object, "spec", "direction"); d != "to" {
			t.Errorf("%s direction %q", o.GetName(), d)
		}
	}
	// The delay acts towards the remote side only; the bandwidth limit on all the runner's egress.
	tl, _, _ := unstructured.NestedStringMap(objs[0].Object, "spec", "target", "selector", "labelSelectors")
	if tl["cnpg.io/cluster"] != "pg" {
		t.Errorf("delay target %v", tl)
	}
	if _, found, _ := unstructured.NestedMap(objs[1].Object, "spec", "target"); found {
		t.Error("the bandwidth limit has a target, which needs sch_prio")
	}
	l.ExternalTargets = []string{"db.example.com"}
	objs = l.Objects()
	if ext, _, _ := unstructured.NestedStringSlice(objs[0].Object, "spec", "externalTargets"); len(ext) != 1 {
		t.Errorf("external targets %v", ext)
	}
}

func TestInjectionOf(t *testing.T) {
	status := func(conditions []any, records []any) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
			"conditions": conditions, "experiment": map[string]any{"containerRecords": records}}}}
		o.SetName("nc")
		return o
	}
	cond := func(typ, s string) any { return map[string]any{"type": typ, "status": s} }
	event := func(typ, msg string) any { return map[string]any{"operation": "Apply", "type": typ, "message": msg} }
	failed := map[string]any{"id": "db/runner", "events": []any{event("Failed",
		"rpc error: code = Unknown desc = error code: Error: Specified qdisc kind is unknown.")}}
	tests := []struct {
		name string
		o    *unstructured.Unstructured
		want func(Injection) bool
	}{
		{"new", status(nil, nil), func(i Injection) bool { return !i.Injected && strings.Contains(i.Waiting, "select") }},
		{"selected", status([]any{cond("Selected", "True"), cond("AllInjected", "False")}, nil),
			func(i Injection) bool { return strings.Contains(i.Waiting, "inject") }},
		{"injected", status([]any{cond("Selected", "True"), cond("AllInjected", "True")}, nil),
			func(i Injection) bool { return i.Injected && i.Failure == "" }},
		{"no netem", status([]any{cond("Selected", "True"), cond("AllInjected", "False")}, []any{failed}),
			func(i Injection) bool {
				return strings.Contains(i.Failure, "qdisc kind is unknown") && strings.HasPrefix(i.Failure, "db/runner")
			}},
		{"retried", status([]any{cond("Selected", "True"), cond("AllInjected", "False")}, []any{map[string]any{"id": "db/runner",
			"events": []any{event("Failed", "x"), event("Succeeded", "")}}}), func(i Injection) bool { return i.Failure == "" }},
	}
	for _, tt := range tests {
		if got := InjectionOf(tt.o); !tt.want(got) {
			t.Errorf("%s: %+v", tt.name, got)
		}
	}
}
