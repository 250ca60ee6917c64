package results

import (
	"math"
	"testing"

	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// TestOpenLoopRuns: an open-loop run is compared by the inverse of its mean latency (the paths run
// the same tps), and one that skipped more than 1 % of its schedule is left out.
func TestOpenLoopRuns(t *testing.T) {
	run := func(round int32, latency float64, skipped int64) benchv1.RunResult {
		return benchv1.RunResult{Round: round, TPS: 500, LatencyAvgMs: latency, Transactions: 5000,
			OpenLoop: &benchv1.OpenLoopRun{RateTPS: 500, Skipped: skipped}}
	}
	if f := run(1, 2, 0).Figure(); f != 500 {
		t.Errorf("figure of a 2 ms open-loop run %v, want 500 (1000/2)", f)
	}
	a := &benchv1.TransportResult{Runs: []benchv1.RunResult{run(1, 1.0, 0), run(2, 1.1, 0), run(3, 1.05, 0)}}
	b := &benchv1.TransportResult{Runs: []benchv1.RunResult{run(1, 2.0, 0), run(2, 2.1, 50), run(3, 2.2, 51)}}
	// Round 3 skipped 51 of 5051 scheduled, just above 1 %; round 2's 50 of 5050 is not.
	if as, bs := benchv1.PairedFigures(a, b); len(as) != 2 || math.Abs(bs[1]-1000/2.1) > 1e-9 {
		t.Errorf("paired %v %v, want rounds 1 and 2", as, bs)
	}
	tb := simulatedBenchmark(2, 3, benchv1.OrderInterleaved)
	tb.Spec.Load.Rate = ptr.To[int32](500)
	tb.Status.Results = []benchv1.TransportResult{{Transport: "t0", Runs: a.Runs}, {Transport: "t1",
		Runs: []benchv1.RunResult{run(1, 2.0, 0), run(2, 2.1, 0), run(3, 2.2, 0)}}}
	Summarize(tb)
	// Same tps, twice the latency: slower, by the ratio of the latencies.
	if c := tb.Status.Results[1].Comparison; c == nil || c.Verdict != benchv1.VerdictSlower || c.Ratio > 0.52 || c.Ratio < 0.48 {
		t.Errorf("open-loop comparison %+v, want slower at about 0.5", c)
	}
}
