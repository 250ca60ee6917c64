// Package crossbench compares two benchmarks of the same transports, before and after a change.
//
// The runs of two benchmarks are not pairs, and this machine's medians move by 5–7 % between
// benchmarks against 3–5 % between the runs of one (docs/studies/reproducibility.md): treating the runs
// of both as one population flags a regression on unchanged code more often the more repetitions
// there are. So each transport is compared through what its own benchmark measured against its
// own baseline — the paired ratio of every round, drawn while both ran under the same drift — and
// the change is the ratio of those ratios, after over before, with Welch's interval over the
// rounds of either benchmark: what drifted between the benchmarks cancels. What does not cancel
// (a drift that hits one path more than another) is what the minimum effect, the threshold, is
// for: a change is called only when its whole interval lies beyond it. The verdicts are adjusted
// across the transports (Holm). The baseline's own change is shown in absolute figures, drift
// included, and judged by nothing.
package crossbench

import (
	"fmt"
	"math"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
)

// DefaultThreshold is the smallest change compare calls (3 %). On this machine the ratio of one
// transport to another moves between benchmarks by about 2.3 % beyond what its runs' spread
// explains (docs/studies/reproducibility.md's table: TLS/direct varies by 3.4–4 % across benchmarks,
// its within-benchmark standard error is about 2.5 %); with the whole interval required beyond 3 %
// an A/A comparison calls a regression in 0.6, 2.1 and 4.0 % of benchmarks at 3, 5 and 10
// repetitions (TestFalseAlarms), where without a threshold it reaches 11 % at 10.
const DefaultThreshold = 0.03

// Result is a comparison of two benchmarks.
type Result struct {
	Before    string  `json:"before"`
	After     string  `json:"after"`
	Unit      string  `json:"unit"`
	Baseline  string  `json:"baseline"`
	Threshold float64 `json:"threshold"`
	// Changes holds the baseline first, then every other transport both benchmarks ran.
	Changes []Change `json:"changes"`
	// Regressions names the transports that got slower, relative to the baseline, by more than
	// the threshold.
	Regressions []string `json:"regressions,omitempty"`
}

// Change is one transport's before and after.
type Change struct {
	Transport string `json:"transport"`
	// Point is the sweep's point compared, e.g. "clients=4"; empty without a sweep.
	Point string `json:"point,omitempty"`
	// MedianBefore and MedianAfter are the transport's medians (Unit): absolute figures, the
	// drift between the benchmarks included.
	MedianBefore float64 `json:"medianBefore"`
	MedianAfter  float64 `json:"medianAfter"`
	// VsBaselineBefore and VsBaselineAfter are its paired ratios to the baseline in each benchmark
	// (geometric means over the rounds); zero for the baseline.
	VsBaselineBefore float64 `json:"vsBaselineBefore,omitempty"`
	VsBaselineAfter  float64 `json:"vsBaselineAfter,omitempty"`
	// Ratio is VsBaselineAfter/VsBaselineBefore, with its interval (Low, High) at Level.
	Ratio float64 `json:"ratio,omitempty"`
	Low   float64 `json:"low,omitempty"`
	High  float64 `json:"high,omitempty"`
	Level float64 `json:"level,omitempty"`
	// Verdict is slower, faster or indistinguishable (within the threshold or the noise), or
	// baseline.
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

// Compare compares after with before: the transports both ran, each relative to the baseline in
// its own benchmark. It refuses, with the reason, benchmarks that cannot be compared (Comparable).
func Compare(before, after *benchv1.TunnelBenchmark, threshold float64) (Result, error) {
	if threshold < 0 || threshold >= 0.5 {
		return Result{}, fmt.Errorf("threshold %g: want at least 0 and below 0.5", threshold)
	}
	if err := Comparable(before, after); err != nil {
		return Result{}, err
	}
	base := before.Spec.Transports[0].Name
	out := Result{Before: qualified(before), After: qualified(after), Unit: unit(after), Baseline: base, Threshold: threshold}
	// The changes in order, each point's baseline first; tested are the indexes of those that
	// form the family.
	var family []stats.Ratio
	var changes []Change
	var tested []int
	for point := range before.Points() {
		pb, pa := before.ResultsAt(point), after.ResultsAt(point)
		at := before.PointName(point)
		bBase, aBase := benchv1.FindResult(pb, base), benchv1.FindResult(pa, base)
		changes = append(changes, Change{Transport: base, Point: at, MedianBefore: median(bBase),
			MedianAfter: median(aBase), Verdict: "baseline",
			Reason: "the reference of both: its own change includes the drift between the benchmarks"})
		for _, t := range commonTransports(before, after) {
			b, a := benchv1.FindResult(pb, t), benchv1.FindResult(pa, t)
			rb, ra := ratios(bBase, b), ratios(aBase, a)
			if len(rb) < 2 || len(ra) < 2 {
				return Result{}, fmt.Errorf("%s: %d rounds paired with the baseline before, %d after: "+
					"comparing benchmarks needs at least 2 on each side (one round has no spread to judge a change by)",
					where(t, at), len(rb), len(ra))
			}
			r, err := stats.UnpairedRatio(rb, ra)
			if err != nil {
				return Result{}, fmt.Errorf("%s: %w", where(t, at), err)
			}
			family, tested = append(family, r), append(tested, len(changes))
			changes = append(changes, Change{Transport: t, Point: at, MedianBefore: median(b), MedianAfter: median(a),
				VsBaselineBefore: geomean(rb), VsBaselineAfter: geomean(ra)})
		}
	}
	// Every transport at every point is one test of the family.
	for i, r := range stats.HolmBeyond(family, threshold) {
		ch := &changes[tested[i]]
		ch.Ratio, ch.Low, ch.High, ch.Level = r.Estimate, r.Low, r.High, orLevel(r.Level)
		ch.Verdict, ch.Reason = string(r.VerdictBeyond(threshold)), reason(r, threshold)
		if ch.Verdict == string(stats.Slower) {
			out.Regressions = append(out.Regressions, where(ch.Transport, ch.Point))
		}
	}
	out.Changes = changes
	return out, nil
}

// where names a transport at a sweep's point: "ssh at clients=4", or "ssh" without a sweep.
func where(transport, point string) string {
	if point == "" {
		return transport
	}
	return transport + " at " + point
}

// ratios are candidate's paired ratios to baseline, round by round.
func ratios(baseline, candidate *benchv1.TransportResult) []float64 {
	bs, cs := benchv1.PairedFigures(baseline, candidate)
	out := make([]float64, 0, len(bs))
	for i := range bs {
		if bs[i] > 0 && cs[i] > 0 {
			out = append(out, cs[i]/bs[i])
		}
	}
	return out
}

func reason(r stats.Ratio, threshold float64) string {
	low, high := 1-threshold, 1/(1-threshold)
	where := fmt.Sprintf("does not lie wholly outside [%.3f, %.3f]", low, high)
	switch r.VerdictBeyond(threshold) {
	case stats.Slower:
		where = fmt.Sprintf("lies below %.3f", low)
	case stats.Faster:
		where = fmt.Sprintf("lies above %.3f", high)
	}
	return fmt.Sprintf("%.4g%% interval [%.3f, %.3f] of the change relative to the baseline %s (threshold %.3g%%)",
		100*orLevel(r.Level), r.Low, r.High, where, 100*threshold)
}

func orLevel(level float64) float64 {
	if level == 0 {
		return 0.95
	}
	return level
}

func geomean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

func median(r *benchv1.TransportResult) float64 {
	return stats.Median(r.CountedFigures())
}

func qualified(tb *benchv1.TunnelBenchmark) string {
	return tb.Namespace + "/" + tb.Name
}

// unit is what the figures compared are: an open loop's are 1000 over the mean latency in ms.
func unit(tb *benchv1.TunnelBenchmark) string {
	switch {
	case tb.Spec.Load.Copy != nil:
		return "MB/s"
	case tb.Spec.Load.Rate != nil:
		return "1/latency"
	}
	return "tps"
}
