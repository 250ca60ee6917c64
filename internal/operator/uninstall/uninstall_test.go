package uninstall

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// TestDecide: running benchmarks are cancelled once, and every one holding the finalizer is
// waited for, ended or not.
func TestDecide(t *testing.T) {
	tb := func(name string, phase benchv1.Phase, cancel bool, finalizer bool) benchv1.TunnelBenchmark {
		b := benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		b.Status.Phase, b.Spec.Cancel = phase, cancel
		if finalizer {
			b.Finalizers = []string{benchv1.CleanupFinalizer}
		}
		return b
	}
	plan := Decide([]benchv1.TunnelBenchmark{
		tb("running", benchv1.PhaseRunning, false, true),
		tb("queued", benchv1.PhaseQueued, false, false),
		tb("new", "", false, false),
		tb("cancelling", benchv1.PhaseRunning, true, true),
		tb("done", benchv1.PhaseCompleted, false, false),
		tb("failed-cleaning", benchv1.PhaseFailed, false, true),
	})
	var cancel, held []string
	for _, k := range plan.Cancel {
		cancel = append(cancel, k.Name)
	}
	for _, k := range plan.Held {
		held = append(held, k.Name)
	}
	if want := []string{"running", "queued", "new"}; !slices.Equal(cancel, want) {
		t.Errorf("cancel %v, want %v", cancel, want)
	}
	if want := []string{"running", "cancelling", "failed-cleaning"}; !slices.Equal(held, want) {
		t.Errorf("held %v, want %v", held, want)
	}
	if plan.Done() || !Decide([]benchv1.TunnelBenchmark{tb("done", benchv1.PhaseCompleted, false, false)}).Done() {
		t.Error("Done is wrong")
	}
}
