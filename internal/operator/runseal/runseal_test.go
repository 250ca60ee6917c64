package runseal

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// run is a benchmark as the schedules' controller makes it for schedule "nightly", sealed with key.
func run(key Key) *benchv1.TunnelBenchmark {
	stb := &benchv1.ScheduledTunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "nightly", UID: "s-uid"}}
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "nightly-29931169",
		Labels:          map[string]string{benchv1.LabelSchedule: "nightly", benchv1.LabelTemplateHash: "0123456789abcdef"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(stb, benchv1.GroupVersion.WithKind("ScheduledTunnelBenchmark"))}}}
	tb.Annotations = map[string]string{benchv1.AnnotationRunSeal: key.Seal(tb, "nightly", "s-uid")}
	return tb
}

// TestScheduleOf: a run sealed by the operator's key is its schedule's; a benchmark that claims to
// be one (labels, owner, a seal from another key, or of another run) is nobody's.
func TestScheduleOf(t *testing.T) {
	key := Key(strings.Repeat("k", keySize))
	tests := []struct {
		name   string
		tb     func() *benchv1.TunnelBenchmark
		key    Key
		sealed bool
	}{
		{"the operator's run", func() *benchv1.TunnelBenchmark { return run(key) }, key, true},
		{"no key: nothing is sealed", func() *benchv1.TunnelBenchmark { return run(key) }, nil, false},
		{"sealed with another key", func() *benchv1.TunnelBenchmark { return run(Key(strings.Repeat("x", keySize))) }, key, false},
		{"no seal", func() *benchv1.TunnelBenchmark {
			tb := run(key)
			delete(tb.Annotations, benchv1.AnnotationRunSeal)
			return tb
		}, key, false},
		{"another run's seal (renamed)", func() *benchv1.TunnelBenchmark {
			tb := run(key)
			tb.Name = "nightly-29931170"
			return tb
		}, key, false},
		{"another template's hash", func() *benchv1.TunnelBenchmark {
			tb := run(key)
			tb.Labels[benchv1.LabelTemplateHash] = "fedcba9876543210"
			return tb
		}, key, false},
		{"another schedule's label", func() *benchv1.TunnelBenchmark {
			tb := run(key)
			tb.Labels[benchv1.LabelSchedule] = "weekly"
			return tb
		}, key, false},
		{"a schedule of the same name made again (another UID)", func() *benchv1.TunnelBenchmark {
			tb := run(key)
			tb.OwnerReferences[0].UID = types.UID("s-uid-2")
			return tb
		}, key, false},
		{"no owner", func() *benchv1.TunnelBenchmark {
			tb := run(key)
			tb.OwnerReferences = nil
			return tb
		}, key, false},
		{"a seal that is not hex", func() *benchv1.TunnelBenchmark {
			tb := run(key)
			tb.Annotations[benchv1.AnnotationRunSeal] = "zz"
			return tb
		}, key, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name, uid, ok := tc.key.ScheduleOf(tc.tb())
			if ok != tc.sealed || ok && (name != "nightly" || uid != "s-uid") {
				t.Errorf("ScheduleOf = %q %q %v, want sealed %v", name, uid, ok, tc.sealed)
			}
		})
	}
}
