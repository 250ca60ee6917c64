package benchmark

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// TestEmulatorFor: every link gets the emulator the operator acts for, and what needs no API call
// makes none (the reconciler here has no client): no link, a userspace link, a chaos-mesh link
// of a transport the benchmark runs on the LAN, and a chaos-mesh link whose Job has no running
// pod yet or is already marked in place.
func TestEmulatorFor(t *testing.T) {
	r := &TunnelBenchmarkReconciler{}
	wan := benchv1.Link{Emulator: benchv1.EmulatorChaosMesh, RTT: 20 * time.Millisecond}
	running := []corev1.Pod{{Status: corev1.PodStatus{Phase: corev1.PodRunning}}}
	job := &batchv1.Job{}
	tests := []struct {
		name  string
		link  benchv1.Link
		seen  observedStep
		chaos bool
	}{
		{"no link", benchv1.Link{}, observedStep{job: job, pods: running}, false},
		{"userspace", benchv1.Link{Emulator: benchv1.EmulatorUserspace, RTT: 20 * time.Millisecond},
			observedStep{job: job, pods: running}, false},
		{"chaos-mesh on the LAN", benchv1.Link{Emulator: benchv1.EmulatorChaosMesh}, observedStep{job: job, pods: running}, true},
		{"chaos-mesh, no Job yet", wan, observedStep{}, true},
		{"chaos-mesh, runner not running", wan, observedStep{job: job}, true},
		{"chaos-mesh, already in place", wan, observedStep{job: job, pods: running,
			data: map[string]string{runspec.LinkInjectedKey: runspec.LinkInjected}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := r.emulatorFor("t", tt.link, transport.Hop{})
			if _, chaos := e.(chaosEmulator); chaos != tt.chaos {
				t.Fatalf("emulator %T, want chaos-mesh's: %v", e, tt.chaos)
			}
			if err := e.whileRunning(context.Background(), &benchv1.TunnelBenchmark{}, tt.seen); err != nil {
				t.Errorf("whileRunning: %v", err)
			}
		})
	}
}
