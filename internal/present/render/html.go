package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

// HTML writes the report as one self-contained page: inline CSS and SVG charts drawn here, no
// script, no font, nothing fetched. Charts: the median per transport with its interval, latency
// percentiles, tps over time, and connection cost when measured; then the tables.
func HTML(w io.Writer, s summary.Summary) error {
	head, rows := columns(s)
	type detail struct {
		Name  string
		Lines []string
	}
	var ds []detail
	for _, t := range s.Transports {
		if l := details(t); len(l) > 0 {
			ds = append(ds, detail{t.Name, l})
		}
	}
	data := map[string]any{
		"S": s, "Header": header(s), "Head": head, "Rows": rows, "Details": ds,
		"Rates": rateChart(s), "Latency": latencyChart(s), "Series": seriesChart(s), "Connect": connectChart(s),
		"Cost": costChart(s), "Budget": budgetChart(s), "Forest": forestChart(s),
	}
	if s.Sweep != nil {
		type curve struct {
			Title, Reason string
			Rows          [][]string
		}
		var curves []curve
		for _, c := range s.Sweep.Curves {
			curves = append(curves, curve{curveTitle(s, c), c.KneeReason, sweepRows(c)})
		}
		tps, p99 := sweepCharts(s)
		data = map[string]any{"S": s, "Header": header(s), "SweepHead": sweepHead(s), "Curves": curves,
			"CurveTPS": tps, "CurveP99": p99}
	}
	return page.Execute(w, data)
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>TunnelBench: {{.S.Namespace}}/{{.S.Name}}</title>
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2433}
header{background:#1d2433;color:#fff;padding:20px 32px}
header h1{margin:0 0 6px;font-size:22px;font-weight:600}
header p{margin:2px 0;color:#c9d1e0}
.partial{display:inline-block;background:#f2b84b;color:#1d2433;border-radius:4px;padding:1px 8px;margin-left:8px;font-size:13px}
main{padding:20px 32px;max-width:1200px}
section{background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.08);padding:16px 20px;margin-bottom:20px}
h2{font-size:17px;margin:0 0 10px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:20px}
svg text{font:12px system-ui,sans-serif;fill:#3a4356}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{padding:6px 8px;border-bottom:1px solid #e6e9ef;text-align:right}
td{overflow-wrap:anywhere}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}
th{background:#f0f2f6;font-weight:600}
ul{margin:0;padding-left:18px}
.note{color:#5b6476;font-size:13px}
#results,.curve{overflow-x:auto}
#forest{grid-column:1/-1}
</style></head><body>
<header><h1>{{index .Header 0}}{{if .S.Partial}}<span class="partial">partial</span>{{end}}</h1>
{{range $i, $l := .Header}}{{if $i}}<p>{{$l}}</p>{{end}}{{end}}
{{if .S.Best}}<p>best: {{.S.Best}}</p>{{end}}</header>
<main>
{{if .S.Sweep}}<div class="charts">
<section id="curves"><h2>tps against {{.S.Sweep.Parameter}} (median; band: interval of the median; ring: knee)</h2>
{{if .CurveTPS}}{{.CurveTPS}}{{else}}<p class="note">No curve yet: a transport's curve appears once it has run at every
point.</p>{{end}}</section>
{{if .CurveP99}}<section id="curve-latency"><h2>p99 latency against {{.S.Sweep.Parameter}} (ms; band down to p50)</h2>
{{.CurveP99}}</section>{{end}}
</div>
{{range .Curves}}<section class="curve"><h2>{{.Title}}</h2><table><thead><tr>{{range $.SweepHead}}<th>{{.}}</th>{{end}}
</tr></thead><tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody></table>
<p class="note">knee: {{.Reason}}</p></section>{{end}}
<p class="note">Intervals are of the median, distribution-free. Gains are each point's figure over the previous
point's, paired by round and Holm-adjusted over the curve's steps; the knee is the last point whose gain lies
beyond 5 %. The ratio to {{.S.Baseline}} is taken at the same point.</p>
{{else}}<div class="charts">
{{if .Forest}}<section id="forest"><h2>Ratio to {{.S.Baseline}} with its interval (log scale; Holm-adjusted above 95 %)</h2>
{{.Forest}}</section>{{end}}
<section id="rates"><h2>{{.S.Unit}} per transport (median, interval of the median)</h2>{{.Rates}}</section>
{{if .Latency}}<section id="latency"><h2>Latency percentiles (ms)</h2>{{.Latency}}</section>{{end}}
{{if .Series}}<section id="series"><h2>tps over time (every run)</h2>{{.Series}}</section>{{end}}
{{if .Connect}}<section id="connect"><h2>Connection cost: one new connection (ms)</h2>{{.Connect}}</section>{{end}}
{{if .Cost}}<section id="cost"><h2>CPU per transaction by part (µs, median of the runs), and limiters</h2>{{.Cost}}</section>{{end}}
{{if .Budget}}<section id="budget"><h2>Where each transaction's round trip went (ms, median of the runs)</h2>
{{.Budget}}</section>{{end}}
</div>
<section id="results"><h2>Results</h2><table><thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody></table></section>
{{if .Details}}<section id="paths"><h2>Paths, links and provenance</h2><ul>
{{range .Details}}<li><b>{{.Name}}</b><ul>{{range .Lines}}<li>{{.}}</li>{{end}}</ul></li>{{end}}</ul></section>{{end}}
<p class="note">Intervals are of the median, distribution-free: 95 % with 6 runs or more, else the min–max with
its coverage. Verdicts come from the ratio's interval against {{.S.Baseline}} (paired by round; Holm-adjusted
across the transports, so at most a 5 % chance of any false verdict): a transport is called faster or slower
only when the whole interval says so, as the forest plot shows.{{if .S.OpenLoop}} Open loop: every path ran the
rate asked, so the ratios compare mean latency, schedule lag included.{{end}}</p>
{{end}}</main></body></html>
`))

// palette colours transports in order; verdicts colour the bars.
var palette = []string{"#3b6fd8", "#e0703a", "#2e9d6b", "#a554c9", "#c9a227", "#d04a6f", "#3aa6b8", "#7a7f8c"}

var verdictColour = map[string]string{"faster": "#2e9d6b", "slower": "#d04a6f", "indistinguishable": "#7a8aa6", "baseline": "#3b6fd8"}

// Every chart is chartWidth wide (its viewBox: the page scales it) and plots right of plotLeft,
// where the axis labels go.
const (
	chartWidth = 560.0
	plotLeft   = 56.0
)

// chart is an SVG being drawn.
type chart struct {
	b      strings.Builder
	width  float64
	height float64
}

func newChart(height float64) *chart { return newChartOf(chartWidth, height) }

// newChartOf is a chart of its own width: the forest plot spans the page's whole row.
func newChartOf(width, height float64) *chart {
	c := &chart{width: width, height: height}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img">`, c.width, height)
	return c
}

func (c *chart) add(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

func (c *chart) text(x, y float64, anchor, s string) {
	c.add(`<text x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, x, y, anchor, template.HTMLEscapeString(s))
}

func (c *chart) done() template.HTML {
	c.add(`</svg>`)
	return template.HTML(c.b.String()) //nolint:gosec // every text is escaped by text()
}

// niceMax rounds a maximum up to a round figure (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of
// ten) for the axis, so that the tallest bar fills most of the plot.
func niceMax(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// axis draws horizontal grid lines and their labels from 0 to max on the plot area.
func (c *chart) axis(top, right, bottom, max float64) {
	left := plotLeft
	for i := 0; i <= 4; i++ {
		v := max * float64(i) / 4
		y := bottom - (bottom-top)*float64(i)/4
		c.add(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#e6e9ef"/>`, left, right, y, y)
		c.text(left-6, y+4, "end", short(v))
	}
}

// plot is a chart with a value axis from 0 to a round maximum above the highest value, and one
// slot per transport along the other.
type plot struct {
	*chart
	top, bottom, right, max, slot float64
}

func newPlot(height, top, bottom, highest float64, slots int) *plot {
	c := newChart(height)
	p := &plot{chart: c, top: top, bottom: bottom, right: c.width - 10, max: niceMax(highest)}
	p.slot = (p.right - plotLeft) / float64(max(slots, 1))
	c.axis(top, p.right, bottom, p.max)
	return p
}

// highestOf is the largest of a figure over the transports, 0 for none.
func highestOf(s summary.Summary, figure func(summary.Transport) float64) float64 {
	h := 0.0
	for _, t := range s.Transports {
		h = math.Max(h, figure(t))
	}
	return h
}

// y is a value's height on the plot.
func (p *plot) y(v float64) float64 { return p.bottom - (p.bottom-p.top)*v/p.max }

// center is the middle of slot i.
func (p *plot) center(i int) float64 { return plotLeft + p.slot*float64(i) + p.slot/2 }

func short(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.4g", v)
}

// rateChart: a bar per transport at its median, a whisker over its interval, coloured by verdict.
func rateChart(s summary.Summary) template.HTML {
	highest := highestOf(s, func(t summary.Transport) float64 { return math.Max(t.Median, t.High) })
	p := newPlot(290, 14, 250, highest, len(s.Transports))
	for i, t := range s.Transports {
		cx, w := p.center(i), p.slot*0.56
		colour := verdictColour[t.Verdict]
		if colour == "" {
			colour = palette[i%len(palette)]
		}
		if t.Runs > 0 {
			p.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" rx="3"><title>%s</title></rect>`,
				cx-w/2, p.y(t.Median), w, p.bottom-p.y(t.Median), colour,
				template.HTMLEscapeString(fmt.Sprintf("%s: %s %s", t.Name, rate(t.Median, t.Runs), s.Unit)))
			if t.IntervalConfidence > 0 {
				p.add(`<path d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f" stroke="#1d2433" stroke-width="1.5"/>`,
					cx, p.y(t.Low), p.y(t.High), cx-8, p.y(t.Low), cx+8, cx-8, p.y(t.High), cx+8)
			}
			p.text(cx, p.y(math.Max(t.Median, t.High))-6, "middle", rate(t.Median, t.Runs))
		}
		p.text(cx, p.bottom+16, "middle", t.Name)
		p.text(cx, p.bottom+31, "middle", dash(t.Verdict))
	}
	return p.done()
}

// latencyChart: p50, p90 and p99 side by side per transport; nothing when none was sampled.
func latencyChart(s summary.Summary) template.HTML {
	highest := highestOf(s, func(t summary.Transport) float64 { return max(t.P50Ms, t.P90Ms, t.P99Ms) })
	if highest == 0 {
		return ""
	}
	p := newPlot(280, 24, 250, highest, len(s.Transports))
	shades := []string{"#9bb7ee", "#5a86e0", "#1f4fb0"}
	for k, name := range []string{"p50", "p90", "p99"} {
		p.add(`<rect x="%.1f" y="6" width="10" height="10" fill="%s"/>`, plotLeft+float64(k)*60, shades[k])
		p.text(plotLeft+float64(k)*60+14, 15, "start", name)
	}
	for i, t := range s.Transports {
		x := p.center(i) - p.slot*0.3
		w := p.slot * 0.6 / 3
		for k, v := range []float64{t.P50Ms, t.P90Ms, t.P99Ms} {
			if v == 0 {
				continue
			}
			p.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`,
				x+w*float64(k), p.y(v), w-2, p.bottom-p.y(v), shades[k],
				template.HTMLEscapeString(fmt.Sprintf("%s p%s: %.3f ms", t.Name, []string{"50", "90", "99"}[k], v)))
		}
		switch {
		case t.P50Ms == 0:
			p.text(p.center(i), p.bottom-8, "middle", "not sampled")
		case t.P99Ms == 0:
			p.text(p.center(i), p.bottom-8, "middle", fmt.Sprintf("p99: too few samples (%d)", t.EffectiveSamples))
		}
		p.text(p.center(i), p.bottom+16, "middle", t.Name)
	}
	return p.done()
}

// seriesChart: every run's tps over time, one colour per transport; nothing without series.
func seriesChart(s summary.Summary) template.HTML {
	maxT, maxV := 0.0, 0.0
	for _, t := range s.Transports {
		for _, r := range t.Series {
			for i := range r.Seconds {
				maxT, maxV = math.Max(maxT, r.Seconds[i]), math.Max(maxV, r.TPS[i])
			}
		}
	}
	if maxT == 0 {
		return ""
	}
	p := newPlot(280, 30, 250, maxV, 1)
	x := func(sec float64) float64 { return plotLeft + (p.right-plotLeft)*sec/maxT }
	for i, t := range s.Transports {
		colour := palette[i%len(palette)]
		p.add(`<rect x="%.1f" y="8" width="10" height="10" fill="%s"/>`, plotLeft+float64(i)*110, colour)
		p.text(plotLeft+float64(i)*110+14, 17, "start", t.Name)
		for _, r := range t.Series {
			var pts []string
			for j := range r.Seconds {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(r.Seconds[j]), p.y(r.TPS[j])))
			}
			p.add(`<polyline points="%s" fill="none" stroke="%s" stroke-width="1.6" stroke-opacity="0.8"><title>%s</title></polyline>`,
				strings.Join(pts, " "), colour, template.HTMLEscapeString(fmt.Sprintf("%s run %d", t.Name, r.Round)))
		}
	}
	p.text(p.right, p.bottom+16, "end", fmt.Sprintf("%.0f s", maxT))
	p.text(plotLeft, p.bottom+16, "start", "0 s")
	return p.done()
}

// connectChart: one new connection's cost per transport (summary.ConnectionCostOf), when the load
// measured it; never pgbench's initial connection time, which is every client's start-up.
func connectChart(s summary.Summary) template.HTML {
	highest := highestOf(s, func(t summary.Transport) float64 {
		if c := t.ConnectionCost; c != nil {
			return math.Max(c.Median, c.High)
		}
		return 0
	})
	if highest == 0 {
		return ""
	}
	p := newPlot(280, 14, 230, highest, len(s.Transports)) // room for the source under the name
	for i, t := range s.Transports {
		cx, w := p.center(i), p.slot*0.5
		if c := t.ConnectionCost; c != nil && c.Median > 0 {
			p.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" rx="3"/>`, cx-w/2, p.y(c.Median), w,
				p.bottom-p.y(c.Median), palette[i%len(palette)])
			top := c.Median
			if c.IntervalConfidence > 0 {
				p.add(`<path d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f" stroke="#1d2433" stroke-width="1.5"/>`,
					cx, p.y(c.Low), p.y(c.High), cx-8, p.y(c.Low), cx+8, cx-8, p.y(c.High), cx+8)
				top = math.Max(top, c.High)
			}
			p.text(cx, p.y(top)-6, "middle", estimateText(c))
			p.text(cx, p.bottom+30, "middle", "from "+t.ConnectionCostFrom)
		}
		p.text(cx, p.bottom+16, "middle", t.Name)
	}
	return p.done()
}
