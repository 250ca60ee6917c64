package render

import (
	"fmt"
	"html/template"

	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

// segment is one part of a transport's stacked bar.
type segment struct {
	part  string
	value float64
	title string
}

// costChart: a stacked bar per transport of the CPU µs per transaction of each measured part
// (medians over the runs), one colour per part, the limiter under it; nothing when no run was
// measured.
func costChart(s summary.Summary) template.HTML {
	return stackedChart(s, func(t summary.Transport) []segment {
		var out []segment
		for _, c := range t.Cost {
			out = append(out, segment{part: c.Part, value: c.Median,
				title: fmt.Sprintf("%s, %s: %.1f µs per transaction (median of %d runs)", t.Name, c.Part, c.Median, c.Runs)})
		}
		return out
	}, "%.1f", func(t summary.Transport) string { return "limiter: " + dash(t.Limiter) })
}

// unattributedPart names the budget's rest in its chart.
const unattributedPart = "in no part"

// budgetChart: a stacked bar per transport of its round trip (the median over the runs with a
// budget), each measured part's share and the rest in no part's threads (network, link delay,
// queues, parts not measured); nothing when no run has a budget.
func budgetChart(s summary.Summary) template.HTML {
	return stackedChart(s, func(t summary.Transport) []segment {
		b := t.Budget
		if b == nil {
			return nil
		}
		var out []segment
		for _, p := range b.Parts {
			out = append(out, segment{part: p.Part, value: p.Ms,
				title: fmt.Sprintf("%s, %s: %.3g ms of the %.3g ms round trip (median of %d runs)", t.Name, p.Part, p.Ms, b.RoundTripMs, b.Runs)})
		}
		if b.UnattributedMs > 0 {
			out = append(out, segment{part: unattributedPart, value: b.UnattributedMs,
				title: fmt.Sprintf("%s: %.3g ms in no measured part's threads: the network, queues inside a part, the parts not measured",
					t.Name, b.UnattributedMs)})
		}
		return out
	}, "%.3g ms", func(t summary.Transport) string { return "limiter: " + dash(t.Limiter) })
}

// stackedChart: a stacked bar per transport of its segments, one colour per part, the bar's total
// above it and footer's text under it; nothing when no transport has any.
func stackedChart(s summary.Summary, segmentsOf func(summary.Transport) []segment, totalFormat string,
	footer func(summary.Transport) string) template.HTML {
	var parts []string
	colour := map[string]string{}
	total := func(t summary.Transport) float64 {
		sum := 0.0
		for _, g := range segmentsOf(t) {
			sum += g.value
		}
		return sum
	}
	for _, t := range s.Transports {
		for _, g := range segmentsOf(t) {
			if _, seen := colour[g.part]; !seen {
				colour[g.part] = palette[len(parts)%len(palette)]
				parts = append(parts, g.part)
			}
		}
	}
	highest := highestOf(s, total)
	if highest == 0 {
		return ""
	}
	p := newPlot(300, 24, 250, highest, len(s.Transports))
	for k, name := range parts {
		p.add(`<rect x="%.1f" y="6" width="10" height="10" fill="%s"/>`, plotLeft+float64(k)*80, colour[name])
		p.text(plotLeft+float64(k)*80+14, 15, "start", name)
	}
	for i, t := range s.Transports {
		cx, w := p.center(i), p.slot*0.56
		base := 0.0
		for _, g := range segmentsOf(t) {
			p.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`,
				cx-w/2, p.y(base+g.value), w, p.y(base)-p.y(base+g.value), colour[g.part], template.HTMLEscapeString(g.title))
			base += g.value
		}
		if base > 0 {
			p.text(cx, p.y(base)-6, "middle", fmt.Sprintf(totalFormat, base))
		}
		p.text(cx, p.bottom+16, "middle", t.Name)
		p.text(cx, p.bottom+31, "middle", footer(t))
	}
	return p.done()
}
