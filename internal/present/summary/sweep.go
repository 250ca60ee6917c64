package summary

import (
	"fmt"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// Sweep is a swept benchmark's curves, as the report draws them.
type Sweep struct {
	// Parameter is what the sweep varies: clients or tunnels.
	Parameter string `json:"parameter"`
	// Points are the sweep's values.
	Points []int32 `json:"points"`
	// Curves are the transports measured at every point so far, in spec order.
	Curves []Curve `json:"curves"`
}

// Curve is one transport's curve, with its ratio to the baseline at each point.
type Curve struct {
	benchv1.SweepCurve `json:",inline"`
	// Versus is, at each point, its ratio to the baseline at the same point with interval and
	// verdict, e.g. "0.82× [0.78, 0.86] slower"; "baseline" for the baseline.
	Versus []string `json:"versus"`
}

// sweepOf is tb's sweep, nil for a benchmark without one.
func sweepOf(tb *benchv1.TunnelBenchmark) *Sweep {
	sw := tb.Status.Sweep
	if sw == nil {
		return nil
	}
	out := &Sweep{Parameter: string(sw.Parameter)}
	for _, p := range sw.Points {
		out.Points = append(out.Points, p.Value)
	}
	for _, c := range sw.Curves {
		curve := Curve{SweepCurve: c}
		for i := range sw.Points {
			curve.Versus = append(curve.Versus, versus(benchv1.FindResult(tb.ResultsAt(i), c.Transport)))
		}
		out.Curves = append(out.Curves, curve)
	}
	return out
}

// versus says how a result compares with the baseline at its point.
func versus(r *benchv1.TransportResult) string {
	switch {
	case r == nil || r.Comparison == nil:
		return "-"
	case r.Comparison.Verdict == benchv1.VerdictBaseline:
		return "baseline"
	case r.Comparison.Lower == nil:
		return fmt.Sprintf("%.3g× %s", r.Comparison.Ratio, r.Comparison.Verdict)
	}
	c := r.Comparison
	return fmt.Sprintf("%.3g× [%.3g, %.3g] %s", c.Ratio, *c.Lower, *c.Upper, c.Verdict)
}
