package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

// sweepHead is the columns of a curve's table.
func sweepHead(s summary.Summary) []string {
	return []string{strings.ToUpper(s.Sweep.Parameter), "RUNS", "TPS (median)", "INTERVAL", "GAIN vs previous",
		"VS " + s.Baseline, "LATENCY ms", "P50 ms", "P99 ms", "LIMITER"}
}

// sweepRows are a curve's rows, one per point.
func sweepRows(c summary.Curve) [][]string {
	var rows [][]string
	for i, p := range c.Points {
		band := "-"
		if p.TPSLow != nil {
			band = fmt.Sprintf("%s–%s (%.0f%%)", rate(*p.TPSLow, 1), rate(*p.TPSHigh, 1), 100*p.Confidence)
		}
		gain := "-"
		if g := p.Gain; g != nil && g.Lower != nil {
			gain = fmt.Sprintf("×%.3g [%.3g, %.3g] %s", g.Ratio, *g.Lower, *g.Upper, g.Verdict)
		} else if g != nil {
			gain = fmt.Sprintf("×%.3g", g.Ratio)
		}
		versus := "-"
		if i < len(c.Versus) {
			versus = c.Versus[i]
		}
		rows = append(rows, []string{fmt.Sprint(p.Value), fmt.Sprint(p.Runs), rate(p.TPS, int(p.Runs)), band, gain, versus,
			ms(p.LatencyAvgMs), ms(ptr.Deref(p.P50Ms, 0)), ms(ptr.Deref(p.P99Ms, 0)), dash(p.Limiter)})
	}
	return rows
}

// curveTitle is a curve's answer in a line: its knee, and its peak.
func curveTitle(s summary.Summary, c summary.Curve) string {
	knee := "no knee yet"
	switch {
	case c.Knee == nil:
	case c.Saturated:
		knee = fmt.Sprintf("knee at %d %s", *c.Knee, s.Sweep.Parameter)
	default:
		knee = fmt.Sprintf("still gaining at %d %s (no knee within the sweep)", *c.Knee, s.Sweep.Parameter)
	}
	return fmt.Sprintf("%s: %s; peak %s tps at %d %s", c.Transport, knee, rate(c.PeakTPS, 1), c.Peak, s.Sweep.Parameter)
}

// sweepTables writes each curve as a table, with its knee, peak and the knee's reason.
func sweepTables(w io.Writer, s summary.Summary) error {
	if len(s.Sweep.Curves) == 0 {
		fmt.Fprintln(w, "No curve yet: a transport's curve appears once it has run at every point.")
	}
	for _, c := range s.Sweep.Curves {
		fmt.Fprintln(w, curveTitle(s, c))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(sweepHead(s), "\t"))
		for _, r := range sweepRows(c) {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "knee: %s\n\n", c.KneeReason)
	}
	sweepFooter(w)
	return nil
}

func sweepFooter(w io.Writer) {
	fmt.Fprintln(w, "Intervals: of the median, distribution-free (95 % with 6 runs or more, else the min–max and its "+
		"coverage). Gains: each point over the previous, paired by round, Holm-adjusted over the curve's steps; the knee "+
		"is the last point whose gain lies beyond 5 %. VS: the ratio to the baseline at the same point, Holm-adjusted "+
		"across the transports.")
}

// sweepMarkdown writes each curve as a Markdown table.
func sweepMarkdown(w io.Writer, s summary.Summary) {
	for _, c := range s.Sweep.Curves {
		fmt.Fprintf(w, "**%s**\n\n", curveTitle(s, c))
		head := sweepHead(s)
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range sweepRows(c) {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		fmt.Fprintf(w, "\nknee: %s\n\n", c.KneeReason)
	}
	sweepFooter(w)
}

// sweepCSV is one row per transport and point.
func sweepCSV(s summary.Summary) [][]string {
	out := [][]string{{"namespace", "benchmark", "phase", "transport", s.Sweep.Parameter, "runs", "tps_median", "tps_low",
		"tps_high", "interval_confidence", "gain", "gain_low", "gain_high", "gain_verdict", "vs_" + s.Baseline,
		"latency_avg_ms", "p50_ms", "p99_ms", "limiter", "knee", "saturated"}}
	for _, c := range s.Sweep.Curves {
		knee := ""
		if c.Knee != nil {
			knee = fmt.Sprint(*c.Knee)
		}
		for i, p := range c.Points {
			var gain, low, high, verdict string
			if g := p.Gain; g != nil {
				gain, verdict = num(g.Ratio), string(g.Verdict)
				if g.Lower != nil {
					low, high = num(*g.Lower), num(*g.Upper)
				}
			}
			out = append(out, []string{s.Namespace, s.Name, s.Phase, c.Transport, fmt.Sprint(p.Value), fmt.Sprint(p.Runs),
				num(p.TPS), num(ptr.Deref(p.TPSLow, 0)), num(ptr.Deref(p.TPSHigh, 0)), num(p.Confidence), gain, low, high,
				verdict, c.Versus[i], num(p.LatencyAvgMs), num(ptr.Deref(p.P50Ms, 0)), num(ptr.Deref(p.P99Ms, 0)), p.Limiter,
				knee, fmt.Sprint(c.Saturated)})
		}
	}
	return out
}

// curveChart draws each transport's median figure against the swept value (evenly spaced, as
// sweeps double), its interval as a band, and its knee ringed; value reads a point's figure and
// band its interval (nil: none).
func curveChart(s summary.Summary, value func(p pointFigures) float64, band func(p pointFigures) (float64, float64, bool),
	unit string) template.HTML {
	highest := 0.0
	for _, c := range s.Sweep.Curves {
		for _, p := range c.Points {
			f := pointFigures{p.TPS, p.TPSLow, p.TPSHigh, ptr.Deref(p.P50Ms, 0), ptr.Deref(p.P99Ms, 0)}
			_, hi, _ := band(f)
			highest = math.Max(highest, math.Max(value(f), hi))
		}
	}
	if highest == 0 {
		return ""
	}
	p := newPlot(300, 14, 250, highest, len(s.Sweep.Points))
	for i, v := range s.Sweep.Points {
		p.text(p.center(i), p.bottom+16, "middle", fmt.Sprint(v))
	}
	p.text((plotLeft+p.right)/2, p.bottom+34, "middle", s.Sweep.Parameter)
	for ci, c := range s.Sweep.Curves {
		colour := palette[ci%len(palette)]
		var line, upper, lower []string
		for i, pt := range c.Points {
			f := pointFigures{pt.TPS, pt.TPSLow, pt.TPSHigh, ptr.Deref(pt.P50Ms, 0), ptr.Deref(pt.P99Ms, 0)}
			line = append(line, fmt.Sprintf("%.1f,%.1f", p.center(i), p.y(value(f))))
			if lo, hi, ok := band(f); ok {
				upper = append(upper, fmt.Sprintf("%.1f,%.1f", p.center(i), p.y(hi)))
				lower = append([]string{fmt.Sprintf("%.1f,%.1f", p.center(i), p.y(lo))}, lower...)
			}
		}
		if len(upper) == len(c.Points) {
			p.add(`<polygon points="%s %s" fill="%s" fill-opacity="0.15" stroke="none"/>`, strings.Join(upper, " "),
				strings.Join(lower, " "), colour)
		}
		p.add(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"><title>%s</title></polyline>`,
			strings.Join(line, " "), colour, template.HTMLEscapeString(c.Transport))
		for i, pt := range c.Points {
			f := pointFigures{pt.TPS, pt.TPSLow, pt.TPSHigh, ptr.Deref(pt.P50Ms, 0), ptr.Deref(pt.P99Ms, 0)}
			r := 3.0
			if c.Knee != nil && *c.Knee == pt.Value {
				p.add(`<circle cx="%.1f" cy="%.1f" r="8" fill="none" stroke="%s" stroke-width="2"><title>knee</title></circle>`,
					p.center(i), p.y(value(f)), colour)
			}
			p.add(`<circle cx="%.1f" cy="%.1f" r="%.0f" fill="%s"><title>%s</title></circle>`, p.center(i), p.y(value(f)), r,
				colour, template.HTMLEscapeString(fmt.Sprintf("%s at %d: %s %s", c.Transport, pt.Value, short(value(f)), unit)))
		}
		p.text(p.right-4, p.top+14+16*float64(ci), "end", c.Transport)
		p.add(`<rect x="%.1f" y="%.1f" width="10" height="3" fill="%s"/>`, p.right-2, p.top+8+16*float64(ci), colour)
	}
	return p.done()
}

// pointFigures is what the curve charts read of a point.
type pointFigures struct {
	tps       float64
	low, high *float64
	p50, p99  float64
}

// sweepCharts are the curve charts: tps with its band, and p99 latency where sampled.
func sweepCharts(s summary.Summary) (tps, p99 template.HTML) {
	tps = curveChart(s, func(f pointFigures) float64 { return f.tps }, func(f pointFigures) (float64, float64, bool) {
		if f.low == nil {
			return 0, 0, false
		}
		return *f.low, *f.high, true
	}, "tps")
	p99 = curveChart(s, func(f pointFigures) float64 { return f.p99 }, func(f pointFigures) (float64, float64, bool) {
		return f.p50, f.p99, f.p50 > 0
	}, "ms")
	return tps, p99
}
