package render

import (
	"fmt"
	"html/template"

	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

// costChart: a stacked bar per transport of the CPU µs per transaction of each measured part
// (medians over the runs), one colour per part, the limiter under it; nothing when no run was
// measured.
func costChart(s summary.Summary) template.HTML {
	var parts []string
	colour := map[string]string{}
	total := func(t summary.Transport) float64 {
		sum := 0.0
		for _, c := range t.Cost {
			sum += c.Median
		}
		return sum
	}
	for _, t := range s.Transports {
		for _, c := range t.Cost {
			if _, seen := colour[c.Part]; !seen {
				colour[c.Part] = palette[len(parts)%len(palette)]
				parts = append(parts, c.Part)
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
		for _, c := range t.Cost {
			p.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`,
				cx-w/2, p.y(base+c.Median), w, p.y(base)-p.y(base+c.Median), colour[c.Part],
				template.HTMLEscapeString(fmt.Sprintf("%s, %s: %.1f µs per transaction (median of %d runs)", t.Name, c.Part, c.Median, c.Runs)))
			base += c.Median
		}
		if base > 0 {
			p.text(cx, p.y(base)-6, "middle", fmt.Sprintf("%.1f", base))
		}
		p.text(cx, p.bottom+16, "middle", t.Name)
		p.text(cx, p.bottom+31, "middle", "limiter: "+dash(t.Limiter))
	}
	return p.done()
}
