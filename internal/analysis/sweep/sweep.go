// Package sweep draws a swept benchmark's curves: each transport's figure across the sweep's
// points, the gain of each point over the one before it, the knee and the peak. It reads status
// only, and is tested without an API server.
package sweep

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
)

// KneeMinGain is the smallest gain a step of a curve must show, beyond its interval, to count:
// a point whose interval of tps over the previous point's lies wholly above 1.05 gains. Smaller
// gains are real on a quiet machine but not what "still scaling" means to a capacity planner, and
// on this project's noisy machine a 2 % step is within the drift between rounds.
const KneeMinGain = 0.05

// RatioOf is candidate's figure (tps, MB/s for a copy, 1000/latency open-loop) against
// baseline's: paired by round over the rounds both have run, or unpaired over all their runs.
func RatioOf(method benchv1.ComparisonMethod, baseline, candidate *benchv1.TransportResult) (stats.Ratio, error) {
	if method == benchv1.MethodUnpaired {
		return stats.UnpairedRatio(baseline.CountedFigures(), candidate.CountedFigures())
	}
	return stats.PairedRatio(benchv1.PairedFigures(baseline, candidate))
}

// Comparison is what status says of a ratio against baseline: its estimate, interval and verdict
// (beyond threshold: 0 for any difference), and how it was drawn.
func Comparison(method benchv1.ComparisonMethod, baseline string, ratio stats.Ratio, err error,
	threshold float64) *benchv1.Comparison {
	out := &benchv1.Comparison{Baseline: baseline, Method: method, Pairs: int32(ratio.N)}
	if err != nil {
		out.Verdict, out.Reason = benchv1.VerdictIndistinguishable, "no comparison: "+err.Error()
		return out
	}
	out.Ratio, out.Verdict, out.Reason = ratio.Estimate, benchv1.Verdict(ratio.VerdictBeyond(threshold)), ratio.Reason()
	if method == benchv1.MethodUnpaired {
		out.Reason += " (unpaired: the runs were sequential, so a drift of the machine between them is not cancelled)"
	}
	if ratio.HasInterval {
		out.Lower, out.Upper, out.Level = ptr.To(ratio.Low), ptr.To(ratio.High), cmp.Or(ratio.Level, 0.95)
	}
	return out
}

// Point is one value of a sweep and the results measured at it.
type Point struct {
	Value   int32
	Results []benchv1.TransportResult
}

// PointsOf is a swept benchmark's points, each with its results.
func PointsOf(tb *benchv1.TunnelBenchmark) []Point {
	_, values := tb.Spec.Sweep.Parameter()
	out := make([]Point, len(values))
	for i, v := range values {
		out[i] = Point{Value: v, Results: tb.ResultsAt(i)}
	}
	return out
}

// Curves are the transports' curves across the points, in spec order: one for each transport
// measured at every point (a transport still missing a point has none yet).
func Curves(method benchv1.ComparisonMethod, transports []benchv1.TransportSpec, points []Point) []benchv1.SweepCurve {
	var out []benchv1.SweepCurve
	for _, t := range transports {
		results := make([]*benchv1.TransportResult, len(points))
		complete := len(points) > 0
		for i := range points {
			results[i] = benchv1.FindResult(points[i].Results, t.Name)
			complete = complete && results[i] != nil && len(results[i].Runs) > 0
		}
		if complete {
			out = append(out, curve(method, t.Name, points, results))
		}
	}
	return out
}

// curve is one transport's curve from its result at each point.
func curve(method benchv1.ComparisonMethod, name string, points []Point,
	results []*benchv1.TransportResult) benchv1.SweepCurve {
	out := benchv1.SweepCurve{Transport: name}
	gains := make([]stats.Ratio, len(points))
	errs := make([]error, len(points))
	for i := 1; i < len(points); i++ {
		gains[i], errs[i] = RatioOf(method, results[i-1], results[i])
	}
	// The steps of one curve are a family: a false gain anywhere would move the knee, so they are
	// adjusted together (Holm, beyond the minimum gain).
	adjusted := stats.HolmBeyond(gains[1:], KneeMinGain)
	for i, p := range points {
		cp := point(p.Value, results[i])
		if i > 0 {
			cp.Gain = Comparison(method, fmt.Sprint(points[i-1].Value), adjusted[i-1], errs[i], KneeMinGain)
			if errs[i] == nil && cp.Gain.Lower != nil {
				cp.Gain.Reason = gainReason(cp.Gain, len(points)-1)
			}
		}
		out.Points = append(out.Points, cp)
		if i == 0 || cp.TPS > out.PeakTPS {
			out.Peak, out.PeakTPS = p.Value, cp.TPS
		}
	}
	knee(&out)
	return out
}

// knee finds the curve's knee: the last point whose gain over the previous point is significant
// beyond KneeMinGain. Every step needs an interval (two rounds at each point) for a knee: one
// step without one could hide the gain that places it.
func knee(c *benchv1.SweepCurve) {
	last := 0
	for i, p := range c.Points[1:] {
		if p.Gain.Lower == nil {
			c.Knee, c.Saturated = nil, false
			c.KneeReason = fmt.Sprintf("no knee yet: the step to %d has no interval (%s)", p.Value, p.Gain.Reason)
			return
		}
		if p.Gain.Verdict == benchv1.VerdictFaster {
			last = i + 1
		}
	}
	c.Knee = ptr.To(c.Points[last].Value)
	c.Saturated = last < len(c.Points)-1
	steps := len(c.Points) - 1
	switch {
	case last == 0:
		c.KneeReason = fmt.Sprintf("no step gains beyond %.0f %% (Holm-adjusted over %d steps): the curve is flat from %d on",
			100*KneeMinGain, steps, c.Points[0].Value)
	case !c.Saturated:
		g := c.Points[last].Gain
		c.KneeReason = fmt.Sprintf("still gaining at the last point (×%.3f, %s): the knee lies beyond the sweep; extend it",
			g.Ratio, interval(g))
	default:
		g := c.Points[last].Gain
		c.KneeReason = fmt.Sprintf("%d is the last point that gains beyond %.0f %% over the one before it (×%.3f, %s, "+
			"Holm-adjusted over %d steps); no later step does", c.Points[last].Value, 100*KneeMinGain, g.Ratio, interval(g), steps)
	}
}

// gainReason says what a step's interval shows against the minimum gain.
func gainReason(g *benchv1.Comparison, steps int) string {
	what := fmt.Sprintf("does not gain beyond %.0f %%", 100*KneeMinGain)
	switch g.Verdict {
	case benchv1.VerdictFaster:
		what = fmt.Sprintf("gains beyond %.0f %%", 100*KneeMinGain)
	case benchv1.VerdictSlower:
		what = fmt.Sprintf("loses beyond %.0f %%", 100*KneeMinGain)
	}
	return fmt.Sprintf("×%.3f, %s over %d rounds (Holm-adjusted over the curve's %d steps): %s", g.Ratio, interval(g),
		g.Pairs, steps, what)
}

func interval(g *benchv1.Comparison) string {
	return fmt.Sprintf("%.4g%% interval [%.3f, %.3f]", 100*g.Level, *g.Lower, *g.Upper)
}

// point is a transport's figures at one point.
func point(value int32, r *benchv1.TransportResult) benchv1.CurvePoint {
	var tps []float64
	for _, run := range r.Runs {
		if run.Counted() {
			tps = append(tps, run.TPS)
		}
	}
	out := benchv1.CurvePoint{Value: value, Runs: int32(len(tps)), TPS: stats.Median(tps), LatencyAvgMs: r.LatencyAvgMs,
		Limiter: limiter(r.Runs)}
	if ci := stats.MedianCI(tps); ci.Confidence > 0 {
		out.TPSLow, out.TPSHigh, out.Confidence = ptr.To(ci.Low), ptr.To(ci.High), ci.Confidence
	}
	if l := r.Latency; l != nil {
		out.P50Ms, out.P99Ms = ptr.To(l.P50Ms), l.P99Ms
	}
	return out
}

// limiter names the part that ran out in most of the runs, with how many and the first run's
// evidence: "client in 3/3 runs: client used 98% of its 1 core …", at most 256 bytes.
func limiter(runs []benchv1.RunResult) string {
	counts := map[string]int{}
	evidence := map[string]string{}
	for _, r := range runs {
		if r.Limiter != nil {
			counts[r.Limiter.Part]++
			if evidence[r.Limiter.Part] == "" {
				evidence[r.Limiter.Part] = r.Limiter.Evidence
			}
		}
	}
	parts := make([]string, 0, len(counts))
	for p := range counts {
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	slices.SortFunc(parts, func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b)) })
	out := fmt.Sprintf("%s in %d/%d runs", parts[0], counts[parts[0]], len(runs))
	if e := evidence[parts[0]]; e != "" {
		out += ": " + e
	}
	return bounded.Text(out, 256)
}
