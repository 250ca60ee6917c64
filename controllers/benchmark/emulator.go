package benchmark

import (
	"context"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// runEmulator is what a run's emulated link needs from the operator around the run's Job: nothing
// for no link or the userspace emulator (it lives in the runner pod, the transport's part), the
// NetworkChaos objects for chaos-mesh. The run pipeline calls it alike for every link, so that no
// emulator is a branch of its own there.
type runEmulator interface {
	// whileRunning acts on the run's Job as the pass observed it running: a problem (a
	// *peerProblem) fails the benchmark (never a silent un-emulated run).
	whileRunning(ctx context.Context, tb *benchv1.TunnelBenchmark, seen observedStep) error
	// afterRun removes what the run needed once it is over, whatever its outcome.
	afterRun(ctx context.Context, tb *benchv1.TunnelBenchmark, jobName string)
}

// emulatorFor is the run's emulator: chaos-mesh's objects for a chaos-mesh link, else nothing.
func (r *TunnelBenchmarkReconciler) emulatorFor(transportName string, link benchv1.Link, hop transport.Hop) runEmulator {
	if link.Emulator == benchv1.EmulatorChaosMesh {
		return chaosEmulator{r: r, transport: transportName, link: link, hop: hop}
	}
	return noEmulator{}
}

// noEmulator is a run without a link the operator acts on.
type noEmulator struct{}

func (noEmulator) whileRunning(context.Context, *benchv1.TunnelBenchmark, observedStep) error {
	return nil
}

func (noEmulator) afterRun(context.Context, *benchv1.TunnelBenchmark, string) {}

// chaosEmulator is a run's chaos-mesh link: its NetworkChaos objects are the run's peers, created
// and awaited once the runner pod runs (emulateChaosLink) and removed after the run
// (removeChaosLink).
type chaosEmulator struct {
	r         *TunnelBenchmarkReconciler
	transport string
	link      benchv1.Link
	hop       transport.Hop
}

func (c chaosEmulator) whileRunning(ctx context.Context, tb *benchv1.TunnelBenchmark, seen observedStep) error {
	if !c.link.Emulated() {
		return nil
	}
	return c.r.emulateChaosLink(ctx, tb, c.transport, c.link, c.hop, seen)
}

func (c chaosEmulator) afterRun(ctx context.Context, tb *benchv1.TunnelBenchmark, jobName string) {
	c.r.removeChaosLink(ctx, tb, jobName)
}
