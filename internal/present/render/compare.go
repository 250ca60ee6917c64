package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tunnelbench/tunnelbench/internal/analysis/crossbench"
)

// Compare writes a comparison of two benchmarks in format (table, markdown or json).
func Compare(w io.Writer, c crossbench.Result, format string) error {
	head := []string{"TRANSPORT", "BEFORE " + c.Unit, "AFTER " + c.Unit, "VS " + c.Baseline + " BEFORE", "AFTER",
		"CHANGE", "INTERVAL", "VERDICT"}
	var rows [][]string
	for _, ch := range c.Changes {
		name := ch.Transport
		if ch.Point != "" {
			name += " at " + ch.Point
		}
		row := []string{name, rate(ch.MedianBefore, 1), rate(ch.MedianAfter, 1), "-", "-", "-", "-", ch.Verdict}
		if ch.Verdict != "baseline" {
			row[3], row[4] = fmt.Sprintf("%.3f×", ch.VsBaselineBefore), fmt.Sprintf("%.3f×", ch.VsBaselineAfter)
			row[5] = fmt.Sprintf("%.3f×", ch.Ratio)
			row[6] = fmt.Sprintf("[%.3f, %.3f] (%.4g%%)", ch.Low, ch.High, 100*ch.Level)
		}
		rows = append(rows, row)
	}
	verdict := fmt.Sprintf("no transport got slower relative to %s by more than %.3g %%", c.Baseline, 100*c.Threshold)
	if len(c.Regressions) > 0 {
		verdict = fmt.Sprintf("slower relative to %s by more than %.3g %%: %s", c.Baseline, 100*c.Threshold,
			strings.Join(c.Regressions, ", "))
	}
	how := fmt.Sprintf("CHANGE is each transport's ratio to %s after over before (each benchmark's own paired "+
		"ratios, so the drift between the benchmarks cancels), with Welch's interval over their rounds, Holm-adjusted "+
		"across the transports; a verdict needs the whole interval beyond the threshold. %s's own change is in "+
		"absolute figures, drift included, and judged by nothing.", c.Baseline, c.Baseline)
	switch format {
	case "json":
		return writeJSON(w, c)
	case "markdown":
		fmt.Fprintf(w, "### %s → %s\n\n| %s |\n|%s\n", c.Before, c.After, strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		fmt.Fprintf(w, "\n%s.\n\n%s\n", verdict, how)
		return nil
	case "table", "":
		fmt.Fprintf(w, "%s → %s\n\n", c.Before, c.After)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s.\n%s\n", verdict, how)
		return nil
	}
	return fmt.Errorf("unknown output format %q: want table, markdown or json", format)
}
