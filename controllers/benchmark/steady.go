package benchmark

import (
	"fmt"
	"math"
	"time"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/steady"
)

// The NotSteady condition is True once a measured run's tps trended while it ran (internal/analysis/steady): its
// median is a moment of a trend. The message names the run and the change, and recommends a
// warm-up long enough for the path from when the run settled.

// notSteadyMessage says what trended and what to do: a warm-up that covers the part of the run
// before it settled, or, when it never did, longer runs.
func notSteadyMessage(tb *benchv1.TunnelBenchmark, transport string, run benchv1.RunResult) string {
	s := run.Steadiness
	msg := fmt.Sprintf("run %d of transport %s: tps changed by %+.0f%% across the run (least-squares trend of its "+
		"progress reports, beyond %.0f%% and beyond their noise), so its figure is a moment of a trend", run.Round,
		transport, 100*s.Change, 100*steady.MaxChange)
	if s.SettledAfterSeconds == nil {
		return msg + ": it did not settle within the run; lengthen spec.load.warmup and spec.load.duration"
	}
	warmup := tb.WarmupDuration() + time.Duration(math.Ceil(*s.SettledAfterSeconds))*time.Second
	return msg + fmt.Sprintf(": it settled after %.0f s; set spec.load.warmup to at least %s", *s.SettledAfterSeconds, warmup)
}

// warnNotSteady sets NotSteady, with a Warning event the first time, for a run that trended.
func (r *TunnelBenchmarkReconciler) warnNotSteady(tb *benchv1.TunnelBenchmark, transport string, run benchv1.RunResult) {
	if run.Steadiness == nil || run.Steadiness.Steady {
		return
	}
	r.warnOnce(tb, conditions.NotSteady, conditions.ReasonTrending, notSteadyMessage(tb, transport, run))
}
