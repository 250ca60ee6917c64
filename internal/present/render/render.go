// Package render writes a benchmark's summary (package summary) for people and for tools: an
// aligned table for a terminal, Markdown for a pull request or a blog post, CSV for a spreadsheet,
// JSON for scripts, and a self-contained HTML page with charts (html.go).
package render

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

// Formats are the report's output formats, for flags and their errors.
var Formats = []string{"table", "markdown", "csv", "json", "html"}

// Report writes s in format.
func Report(w io.Writer, s summary.Summary, format string) error {
	switch format {
	case "table", "":
		return table(w, s)
	case "markdown":
		return markdown(w, s)
	case "csv":
		return csvReport(w, s)
	case "json":
		return writeJSON(w, s)
	case "html":
		return HTML(w, s)
	}
	return fmt.Errorf("unknown output format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// header is the lines above the table.
func header(s summary.Summary) []string {
	state := s.Phase
	if s.Partial {
		state += " (partial: " + s.Progress + " runs so far)"
	}
	lines := []string{fmt.Sprintf("%s/%s: %s", s.Namespace, s.Name, state)}
	if s.Server != "" {
		server := s.Server
		if s.ServerVersion != "" {
			server += " (PostgreSQL " + s.ServerVersion + ")"
		}
		lines = append(lines, "server: "+server)
	}
	lines = append(lines, "load: "+s.Load)
	if s.Precision != "" {
		lines = append(lines, "precision: "+s.Precision)
	}
	if s.Failure != "" {
		lines = append(lines, "failed: "+s.Failure)
	}
	return lines
}

// columns are the table's columns and each transport's cells, shared by table and markdown.
func columns(s summary.Summary) ([]string, [][]string) {
	head := []string{"TRANSPORT", "TYPE", "RUNS", strings.ToUpper(s.Unit) + " (median)", "INTERVAL",
		"VS " + s.Baseline, "VERDICT", "LATENCY ms", "P50/P90/P99 ms", "CONN ms", "CLIENT µs/tx", "SERVER µs/tx",
		"LIMITER"}
	var rows [][]string
	for _, t := range s.Transports {
		rows = append(rows, []string{
			t.Name, t.Type, fmt.Sprintf("%d/%d", t.Runs, t.Repetitions), rate(t.Median, t.Runs), interval(t),
			ratio(t), verdict(t), ms(t.LatencyAvgMs), percentiles(t), estimateText(t.ConnectionCost), partCost(t, benchv1.PartClient),
			partCost(t, benchv1.PartServer), dash(t.Limiter),
		})
	}
	return head, rows
}

// estimateText is an estimate in milliseconds with its interval, to 3 significant figures (one
// run's average to the microsecond says more than the runs support); "-" when not measured.
func estimateText(e *summary.Estimate) string {
	if e == nil {
		return "-"
	}
	if e.IntervalConfidence > 0 {
		return fmt.Sprintf("%.3g [%.3g–%.3g]", e.Median, e.Low, e.High)
	}
	return fmt.Sprintf("%.3g", e.Median)
}

// verdict is the transport's verdict, marked when it compares runs placed apart from the
// baseline's (the details say where).
func verdict(t summary.Transport) string {
	if t.MixedPlacement != "" {
		return dash(t.Verdict) + " (placements differ)"
	}
	return dash(t.Verdict)
}

// partCost is a part's median CPU per transaction with its interval, "-" when not measured.
func partCost(t summary.Transport, part string) string {
	for _, c := range t.Cost {
		if c.Part != part {
			continue
		}
		if c.IntervalConfidence > 0 {
			return fmt.Sprintf("%.1f [%.1f–%.1f]", c.Median, c.Low, c.High)
		}
		return fmt.Sprintf("%.1f", c.Median)
	}
	return "-"
}

// details are each transport's path, link and provenance, below the table.
func details(t summary.Transport) []string {
	var out []string
	if t.Path != "" {
		out = append(out, "path: "+t.Path)
	}
	if t.Link != "" {
		out = append(out, "link: "+t.Link)
	}
	if t.OpenLoop != "" {
		out = append(out, "open loop: "+t.OpenLoop)
	}
	if t.ConnectionsPerSecond != nil {
		out = append(out, fmt.Sprintf("new connections: %.1f/s", *t.ConnectionsPerSecond))
	}
	for _, e := range t.Evidence {
		out = append(out, "evidence: "+e)
	}
	if c := t.StormConnect; c != nil && t.StormPerSecond != nil {
		out = append(out, fmt.Sprintf("connection storm: %.1f connections/s, connect %.3g ms [%.3g–%.3g] (%.0f %%, %d batches)",
			*t.StormPerSecond, c.Median, c.Low, c.High, 100*c.IntervalConfidence, c.Runs))
	} else if t.StormPerSecond != nil {
		out = append(out, fmt.Sprintf("connection storm: %.1f connections/s", *t.StormPerSecond))
	}
	if len(t.Cost) > 1 {
		var parts []string
		for _, c := range t.Cost {
			parts = append(parts, fmt.Sprintf("%s %s", c.Part, partCost(t, c.Part)))
		}
		out = append(out, "CPU µs per transaction: "+strings.Join(parts, ", "))
	}
	if b := t.Budget; b != nil {
		var parts []string
		for _, p := range b.Parts {
			parts = append(parts, fmt.Sprintf("%s %.3g", p.Part, p.Ms))
		}
		out = append(out, fmt.Sprintf("round trip %.3g ms (median of %d runs): %s; in no measured part %.3g", b.RoundTripMs, b.Runs,
			strings.Join(parts, ", "), b.UnattributedMs))
	}
	if w := t.Wire; w != nil {
		line := fmt.Sprintf("on the wire: %.0f bytes per %s", w.Median, w.Per)
		if w.IntervalConfidence > 0 {
			line += fmt.Sprintf(" [%.0f–%.0f]", w.Low, w.High)
		}
		out = append(out, line)
	}
	if t.MixedPlacement != "" {
		out = append(out, "verdict mixes placements: "+t.MixedPlacement)
	}
	if c := t.ConnectionCost; c != nil {
		out = append(out, fmt.Sprintf("connection cost (CONN): %s ms for one new connection, from the %s",
			estimateText(c), t.ConnectionCostFrom))
	}
	if c := t.ClientsStartup; c != nil {
		out = append(out, fmt.Sprintf("clients' start-up: %s ms (pgbench's initial connection time: every client "+
			"connecting before the load, each thread's one after another; not one connection's cost)", estimateText(c)))
	}
	if su := t.Setup; su != nil {
		out = append(out, fmt.Sprintf("connection setup (median of %d runs): resolve %.2f ms, TCP %.2f ms, TLS %.2f ms, "+
			"startup and authentication %.2f ms; in all %.2f ms", su.Runs, su.ResolveMs, su.TCPMs, su.TLSMs, su.StartupMs, su.TotalMs))
	}
	for _, u := range t.Unmeasured {
		out = append(out, fmt.Sprintf("CPU of %s not known in %d/%d runs: %s", u.Part, u.Runs, t.Runs, u.Reason))
	}
	if len(t.Unsupported) > 0 {
		worth := ""
		if t.EffectiveSamples != t.LatencySamples {
			worth = fmt.Sprintf(" (worth %d once weighted by their runs' sampling)", t.EffectiveSamples)
		}
		out = append(out, fmt.Sprintf("latency: %d samples%s, too few for %s: a percentile is given with at least %d "+
			"samples beyond it (p99 from 1,000, p99.9 from 10,000)", t.LatencySamples, worth,
			strings.Join(t.Unsupported, " or "), latency.MinTailSamples))
	}
	if t.FailedTransactions > 0 {
		out = append(out, fmt.Sprintf("failed transactions: %d", t.FailedTransactions))
	}
	if t.Node != "" {
		out = append(out, fmt.Sprintf("ran on %s, %s, %s", t.Node, dash(t.PgbenchVersion), dash(t.RunnerImage)))
	}
	return out
}

func table(w io.Writer, s summary.Summary) error {
	for _, l := range header(s) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
	if s.Sweep != nil {
		return sweepTables(w, s)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head, rows := columns(s)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, t := range s.Transports {
		for _, d := range details(t) {
			fmt.Fprintf(w, "%s %s\n", t.Name+":", d)
		}
	}
	fmt.Fprintln(w)
	for _, l := range forest(s, forestWidth) {
		fmt.Fprintln(w, l)
	}
	footer(w, s)
	return nil
}

func footer(w io.Writer, s summary.Summary) {
	verdicts := "the paired ratio's 95 % interval against " + s.Baseline
	if n := len(s.Transports) - 1; n > 1 {
		verdicts = fmt.Sprintf("the paired ratios' intervals against %s, Holm-adjusted across the %d comparisons "+
			"(at most 5 %% chance of any false verdict)", s.Baseline, n)
	}
	fmt.Fprintln(w, "Intervals: of the median, distribution-free; 95 % with 6 runs or more, else the min–max and its "+
		"coverage. Verdicts: "+verdicts+".")
	if s.OpenLoop {
		fmt.Fprintln(w, "Open loop: every path ran the rate asked, so tps says nothing of it; the ratios and verdicts "+
			"compare mean latency (schedule lag included): a ratio of 0.5 is twice the baseline's latency.")
	}
	if s.Best != "" {
		fmt.Fprintln(w, "Best: "+s.Best)
	}
}

func markdown(w io.Writer, s summary.Summary) error {
	h := header(s)
	fmt.Fprintf(w, "### %s\n\n", h[0])
	for _, l := range h[1:] {
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintln(w)
	if s.Sweep != nil {
		sweepMarkdown(w, s)
		return nil
	}
	head, rows := columns(s)
	fmt.Fprintf(w, "| %s |\n", strings.Join(head, " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(head)))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
	for _, t := range s.Transports {
		for _, d := range details(t) {
			fmt.Fprintf(w, "- **%s** %s\n", t.Name, d)
		}
	}
	fmt.Fprintln(w)
	for _, l := range forest(s, forestWidth) {
		fmt.Fprintln(w, l)
	}
	footer(w, s)
	return nil
}

// csvReport is one row per transport with plain numbers (no units in the cells; the header
// names them), for spreadsheets.
func csvReport(w io.Writer, s summary.Summary) error {
	cw := csv.NewWriter(w)
	if s.Sweep != nil {
		_ = cw.WriteAll(sweepCSV(s))
		return cw.Error()
	}
	unit := strings.ReplaceAll(s.Unit, "/", "_per_")
	_ = cw.Write([]string{"namespace", "benchmark", "phase", "transport", "type", "runs", "repetitions",
		unit + "_median", unit + "_low", unit + "_high", "interval_confidence", "cv", "ratio_vs_" + s.Baseline,
		"ratio_low", "ratio_high", "verdict", "latency_avg_ms", "p50_ms", "p90_ms", "p99_ms",
		"connection_cost_ms", "connection_cost_from", "clients_startup_ms",
		"link", "path", "node"})
	for _, t := range s.Transports {
		_ = cw.Write([]string{s.Namespace, s.Name, s.Phase, t.Name, t.Type, strconv.Itoa(t.Runs), strconv.Itoa(t.Repetitions),
			num(t.Median), num(t.Low), num(t.High), num(t.IntervalConfidence), num(t.CV), num(t.Ratio), num(t.RatioLow),
			num(t.RatioHigh), t.Verdict, num(t.LatencyAvgMs), num(t.P50Ms), num(t.P90Ms), num(t.P99Ms),
			num(medianOf(t.ConnectionCost)), t.ConnectionCostFrom, num(medianOf(t.ClientsStartup)),
			t.Link, t.Path, t.Node})
	}
	cw.Flush()
	return cw.Error()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// medianOf is an estimate's median, 0 when not measured.
func medianOf(e *summary.Estimate) float64 {
	if e == nil {
		return 0
	}
	return e.Median
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func rate(x float64, runs int) string {
	if runs == 0 {
		return "-"
	}
	if x >= 100 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

func interval(t summary.Transport) string {
	if t.IntervalConfidence == 0 {
		return "-"
	}
	return fmt.Sprintf("%s–%s (%.0f%%)", rate(t.Low, 1), rate(t.High, 1), 100*t.IntervalConfidence)
}

func ratio(t summary.Transport) string {
	switch {
	case t.Ratio == 0:
		return "-"
	case t.RatioLow == 0 && t.RatioHigh == 0:
		return fmt.Sprintf("%.3g×", t.Ratio)
	}
	return fmt.Sprintf("%.3g× [%.3g, %.3g]", t.Ratio, t.RatioLow, t.RatioHigh)
}

func percentiles(t summary.Transport) string {
	if t.P50Ms == 0 {
		return "-"
	}
	return fmt.Sprintf("%s/%s/%s", ms(t.P50Ms), ms(t.P90Ms), ms(t.P99Ms))
}

func ms(x float64) string {
	if x == 0 {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
