package render

import (
	"encoding/csv"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/present/trend"
)

// HistoryFormats are the history's output formats.
var HistoryFormats = []string{"table", "csv", "json", "html"}

// History writes a schedule's history in format: a table of one row per benchmark and a column per
// transport's figure (a regressed result marked "!"), CSV and JSON of every point, or a page with
// each figure's trend drawn and its change points marked.
func History(w io.Writer, h trend.History, format string) error {
	switch format {
	case "table", "":
		return historyTable(w, h)
	case "csv":
		return historyCSV(w, h)
	case "json":
		return writeJSON(w, h)
	case "html":
		return historyHTML(w, h)
	}
	return fmt.Errorf("unknown output format %q: want one of %s", format, strings.Join(HistoryFormats, ", "))
}

func historyTable(w io.Writer, h trend.History) error {
	fmt.Fprintf(w, "%s/%s: %d benchmarks (from the %s); ! marks a result found regressed\n",
		h.Namespace, h.Schedule, len(h.Benchmarks()), h.Source)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := []string{"BENCHMARK", "COMPLETED"}
	for _, s := range h.Series() {
		head = append(head, strings.ToUpper(s[0]+" "+s[1]))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, b := range h.Benchmarks() {
		row := []string{b, ""}
		for _, s := range h.Series() {
			p, ok := h.At(b, s)
			if !ok {
				row = append(row, "-")
				continue
			}
			row[1] = p.CompletedAt.UTC().Format(time.RFC3339)
			cell := fmt.Sprintf("%.4g", p.Value)
			if p.Regressed {
				cell += " !"
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

func historyCSV(w io.Writer, h trend.History) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"benchmark", "completed", "transport", "figure", "value", "low", "high", "regressed"})
	for _, p := range h.Points {
		_ = cw.Write([]string{p.Benchmark, p.CompletedAt.UTC().Format(time.RFC3339), p.Transport, p.Figure, num(p.Value),
			num(p.Low), num(p.High), fmt.Sprint(p.Regressed)})
	}
	cw.Flush()
	return cw.Error()
}

// historyHTML is one self-contained page: a chart per transport's figure, each benchmark's value
// with its interval, a result found regressed in red behind a dashed line (the change point).
func historyHTML(w io.Writer, h trend.History) error {
	type panel struct {
		Title string
		Chart template.HTML
	}
	var panels []panel
	for _, s := range h.Series() {
		panels = append(panels, panel{Title: s[0] + ": " + s[1], Chart: trendChart(h, s)})
	}
	return historyPage.Execute(w, map[string]any{"H": h, "Count": len(h.Benchmarks()), "Panels": panels})
}

// trendChart draws one transport's figure across the benchmarks.
func trendChart(h trend.History, s [2]string) template.HTML {
	benchmarks := h.Benchmarks()
	highest := 0.0
	for _, b := range benchmarks {
		if p, ok := h.At(b, s); ok {
			highest = math.Max(highest, math.Max(p.Value, p.High))
		}
	}
	p := newPlot(240, 20, 210, highest, len(benchmarks))
	for i, b := range benchmarks {
		pt, ok := h.At(b, s)
		if !ok {
			continue
		}
		x, colour := p.center(i), palette[0]
		if pt.Regressed {
			colour = "#d64545"
			p.add(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#d64545" stroke-dasharray="4 3"/>`, x, x, p.top, p.bottom)
			p.text(x, p.top-6, "middle", "change")
		}
		if pt.High > 0 {
			p.add(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.4"/>`, x, x, p.y(pt.Low), p.y(pt.High), colour)
		}
		p.add(`<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s</title></circle>`, x, p.y(pt.Value), colour,
			template.HTMLEscapeString(fmt.Sprintf("%s: %.4g [%.4g, %.4g]", b, pt.Value, pt.Low, pt.High)))
		p.text(x, p.bottom+14, "middle", pt.CompletedAt.UTC().Format("01-02 15:04"))
	}
	return p.done()
}

var historyPage = template.Must(template.New("history").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>TunnelBench history: {{.H.Namespace}}/{{.H.Schedule}}</title>
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2433}
header{background:#1d2433;color:#fff;padding:20px 32px}
header h1{margin:0 0 6px;font-size:22px;font-weight:600}
header p{margin:2px 0;color:#c9d1e0}
main{padding:20px 32px;max-width:1200px}
section{background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.08);padding:16px 20px;margin-bottom:20px}
h2{font-size:17px;margin:0 0 10px}
svg text{font-size:11px;fill:#4a5468}
</style></head><body>
<header><h1>{{.H.Namespace}}/{{.H.Schedule}}</h1>
<p>{{.Count}} benchmarks, from the {{.H.Source}}. Each point is a benchmark's result with its interval;
red behind a dashed line: found regressed against the results before it.</p></header>
<main>
{{range .Panels}}<section><h2>{{.Title}}</h2>{{.Chart}}</section>
{{end}}</main></body></html>
`))
