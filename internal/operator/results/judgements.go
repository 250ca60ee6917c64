package results

import (
	"math"

	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/steady"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// A run's own judgements, recorded with its figures: whether its tps held still, and the time each
// client took per transaction (the reconciler warns from both: NotSteady, LatencyInconsistent).

// CycleMs is the time each client took per transaction, clients ÷ tps, for a closed-loop run
// without reconnection (whose cycles include the connection); nil otherwise.
func CycleMs(tb *benchv1.TunnelBenchmark, res *engine.Result) *float64 {
	if tb.Spec.Load.Rate != nil || res.Reconnect || res.TPS <= 0 || res.Clients <= 0 {
		return nil
	}
	return ptr.To(math.Round(1e6*float64(res.Clients)/res.TPS) / 1e3)
}

// steadiness judges a run from its progress reports; nil with too few of them.
func steadiness(progress []engine.ProgressPoint) *benchv1.Steadiness {
	t, tps := make([]float64, len(progress)), make([]float64, len(progress))
	for i, p := range progress {
		t[i], tps[i] = p.T, p.TPS
	}
	j, ok := steady.Judge(t, tps)
	if !ok {
		return nil
	}
	out := &benchv1.Steadiness{Change: math.Round(j.Change*1000) / 1000, Steady: j.Steady}
	if !j.Steady && j.SettledAfter >= 0 {
		out.SettledAfterSeconds = ptr.To(j.SettledAfter)
	}
	if e, ok := steady.MeanError(tps); ok {
		out.MeanErrorPercent = ptr.To(math.Round(1e5*e) / 1e3)
	}
	return out
}
