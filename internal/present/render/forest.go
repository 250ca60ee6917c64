package render

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

// forestWidth is the text forest plot's scale, in characters.
const forestWidth = 48

// forestRow is one transport's ratio to the baseline and its interval.
type forestRow struct {
	name, verdict         string
	ratio, low, high, lvl float64
}

// forestRows are the transports with a ratio to the baseline, the baseline left out.
func forestRows(s summary.Summary) []forestRow {
	var out []forestRow
	for _, t := range s.Transports {
		if t.Name == s.Baseline || t.Ratio <= 0 {
			continue
		}
		out = append(out, forestRow{name: t.Name, verdict: t.Verdict, ratio: t.Ratio, low: t.RatioLow, high: t.RatioHigh,
			lvl: t.RatioLevel})
	}
	return out
}

// forestScale is the span of the plot on a log scale: every interval, and 1, with a margin.
func forestScale(rows []forestRow) (lo, hi float64) {
	lo, hi = 1.0, 1.0
	for _, r := range rows {
		lo, hi = math.Min(lo, math.Min(r.ratio, orRatio(r.low, r.ratio))), math.Max(hi, math.Max(r.ratio, orRatio(r.high, r.ratio)))
	}
	return lo / 1.05, hi * 1.05
}

func orRatio(bound, ratio float64) float64 {
	if bound <= 0 {
		return ratio
	}
	return bound
}

// forest draws the ratios to the baseline with their intervals on a log scale, the line at 1
// marked: the picture a verdict is checked against ("├──●──┤" the interval and the ratio, "│" at
// 1). Nothing without a ratio to draw.
func forest(s summary.Summary, width int) []string {
	rows := forestRows(s)
	if len(rows) == 0 {
		return nil
	}
	lo, hi := forestScale(rows)
	col := func(x float64) int {
		return int(math.Round(float64(width-1) * math.Log(x/lo) / math.Log(hi/lo)))
	}
	nameWidth := 0
	for _, r := range rows {
		nameWidth = max(nameWidth, len(r.name))
	}
	out := []string{fmt.Sprintf("vs %s (log scale %.3g–%.3g, │ at 1; intervals at the level shown, Holm-adjusted "+
		"when above 95 %%):", s.Baseline, lo, hi)}
	for _, r := range rows {
		line := []rune(strings.Repeat(" ", width))
		line[col(1)] = '│'
		figure := fmt.Sprintf("%.3g×, no interval", r.ratio)
		if r.low > 0 && r.high > 0 {
			a, b := col(r.low), col(r.high)
			for i := a; i <= b; i++ {
				line[i] = '─'
			}
			line[a], line[b] = '├', '┤'
			figure = fmt.Sprintf("%.3g× [%.3g, %.3g] %.4g%%", r.ratio, r.low, r.high, 100*levelOr95(r.lvl))
		}
		line[col(r.ratio)] = '●'
		out = append(out, fmt.Sprintf("  %-*s %s  %s %s", nameWidth, r.name, string(line), figure, r.verdict))
	}
	return append(out, "")
}

func levelOr95(level float64) float64 {
	if level == 0 {
		return 0.95
	}
	return level
}

// forestChartWidth is the forest plot's width: a whole row of the page, where a half-row chart
// clipped a long label.
const forestChartWidth = 1100.0

// forestLabel is a row's ratio with its interval and level, as written right of the plot.
func forestLabel(r forestRow) string {
	if r.low > 0 && r.high > 0 {
		return fmt.Sprintf("%.3g× [%.3g, %.3g] %.4g%%", r.ratio, r.low, r.high, 100*levelOr95(r.lvl))
	}
	return fmt.Sprintf("%.3g× (no interval)", r.ratio)
}

// forestChart is the forest plot as SVG: per transport its interval as a line, its ratio as a
// dot coloured by verdict, on a log scale with the line at 1 dashed.
func forestChart(s summary.Summary) template.HTML {
	rows := forestRows(s)
	if len(rows) == 0 {
		return ""
	}
	// Margins fit the longest name and label (12 px system-ui: under 7.5 px a character), so
	// no label is clipped; the plot spans the page's row.
	const top, rowHeight = 26.0, 30.0
	var longestName, longestLabel int
	for _, r := range rows {
		longestName, longestLabel = max(longestName, utf8.RuneCountInString(r.name)),
			max(longestLabel, utf8.RuneCountInString(forestLabel(r)))
	}
	left, right := 20+7.5*float64(longestName), 20+7.5*float64(longestLabel)
	lo, hi := forestScale(rows)
	c := newChartOf(forestChartWidth, top+rowHeight*float64(len(rows))+30)
	x := func(v float64) float64 { return left + (forestChartWidth-left-right)*math.Log(v/lo)/math.Log(hi/lo) }
	bottom := top + rowHeight*float64(len(rows))
	c.add(`<path d="M%.1f %.1fV%.1f" stroke="#1d2433" stroke-dasharray="4 3"/>`, x(1), top-8, bottom)
	c.text(x(1), top-12, "middle", "1 = "+s.Baseline)
	for _, tick := range []float64{lo, hi} {
		c.text(x(tick), bottom+16, "middle", fmt.Sprintf("%.3g×", tick))
	}
	for i, r := range rows {
		y := top + rowHeight*float64(i) + rowHeight/2
		colour := verdictColour[r.verdict]
		c.text(left-10, y+4, "end", r.name)
		label := forestLabel(r)
		if r.low > 0 && r.high > 0 {
			c.add(`<path d="M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f" stroke="%s" stroke-width="2"/>`,
				x(r.low), y, x(r.high), x(r.low), y-6, y+6, x(r.high), y-6, y+6, colour)
		}
		c.add(`<circle cx="%.1f" cy="%.1f" r="5" fill="%s"><title>%s</title></circle>`, x(r.ratio), y, colour,
			template.HTMLEscapeString(r.name+": "+label+", "+r.verdict))
		c.text(forestChartWidth-right+8, y+4, "start", label)
	}
	return c.done()
}
