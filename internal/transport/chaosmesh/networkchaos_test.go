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
	l := Link{Namespace: "bench", Name: "bench-wan-r1", Source: map[string]string{"batch.kubernetes.io/job-name": "bench-wan-r1"},
		ExternalTargets: []string{"10.96.0.12"}, Remote: map[string]string{"cnpg.io/cluster": "pg"}, RemoteNamespace: "db",
		RTT: 20 * time.Millisecond, Jitter: 2 * time.Millisecond, BitsPerSecond: 50_000_000}
	objs := l.Objects()
	if len(objs) != 3 || objs[0].GetName() != "bench-wan-r1-delay" || objs[1].GetName() != "bench-wan-r1-bandwidth" ||
		objs[2].GetName() != "bench-wan-r1-bandwidth-down" {
		t.Fatalf("objects %v", objs)
	}
	delay, _, _ := unstructured.NestedStringMap(objs[0].Object, "spec", "delay")
	if delay["latency"] != "20ms" || delay["jitter"] != "2ms" {
		t.Errorf("delay %v", delay)
	}
	for _, o := range objs[1:] {
		bw, _, _ := unstructured.NestedMap(o.Object, "spec", "bandwidth")
		if bw["rate"] != "6250000bps" || bw["buffer"].(int64) < 62500 || bw["limit"].(int64) < 625000 {
			t.Errorf("%s: bandwidth %v", o.GetName(), bw)
		}
		// The bandwidth limit acts on all the selected pods' egress: a target needs sch_prio.
		if _, found, _ := unstructured.NestedMap(o.Object, "spec", "target"); found {
			t.Errorf("%s has a target", o.GetName())
		}
	}
	for _, o := range objs {
		if d, _, _ := unstructured.NestedString(o.Object, "spec", "direction"); d != "to" || o.GetNamespace() != "bench" {
			t.Errorf("%s: direction %q, namespace %s", o.GetName(), d, o.GetNamespace())
		}
	}
	// The delay and the runner's bandwidth select the runner's pod; the way back the far end's.
	selected := func(o *unstructured.Unstructured) (string, map[string]string) {
		ns, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "selector", "namespaces")
		ls, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "labelSelectors")
		return strings.Join(ns, ","), ls
	}
	if ns, ls := selected(objs[1]); ns != "bench" || ls["batch.kubernetes.io/job-name"] != "bench-wan-r1" {
		t.Errorf("the runner's bandwidth selects %s %v", ns, ls)
	}
	if ns, ls := selected(objs[2]); ns != "db" || ls["cnpg.io/cluster"] != "pg" {
		t.Errorf("the way back selects %s %v", ns, ls)
	}
	if ext, _, _ := unstructured.NestedStringSlice(objs[0].Object, "spec", "externalTargets"); len(ext) != 1 || ext[0] != "10.96.0.12" {
		t.Errorf("the delay's external targets %v", ext)
	}
	// A headless far end: the delay targets its pods.
	l.ExternalTargets, l.Target, l.TargetNamespace = nil, map[string]string{"app": "gw"}, "db"
	if tl, _, _ := unstructured.NestedStringMap(l.Objects()[0].Object, "spec", "target", "selector", "labelSelectors"); tl["app"] != "gw" {
		t.Errorf("delay target %v", tl)
	}
	// A far end outside the cluster: nothing to select on the way back, delay only.
	l.Remote, l.BitsPerSecond = nil, 0
	if objs := l.Objects(); len(objs) != 1 {
		t.Errorf("objects without a bandwidth: %d", len(objs))
	}
}

func TestUndone(t *testing.T) {
	record := func(injected, recovered int64) any {
		return map[string]any{"id": "db/pg-1", "injectedCount": injected, "recoveredCount": recovered}
	}
	tests := []struct {
		records []any
		want    bool
	}{
		{nil, true},
		{[]any{record(0, 0)}, true},
		{[]any{record(1, 0)}, false},
		{[]any{record(1, 1), record(2, 1)}, false},
		{[]any{record(2, 2)}, true},
	}
	for i, tt := range tests {
		o := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
			"experiment": map[string]any{"containerRecords": tt.records}}}}
		if got := Undone(o); got != tt.want {
			t.Errorf("case %d: Undone = %v", i, got)
		}
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
