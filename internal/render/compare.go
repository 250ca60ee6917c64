package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tunnelbench/tunnelbench/internal/summary"
)

// Compare writes a comparison of two benchmarks in format (table, markdown or json).
func Compare(w io.Writer, c summary.Comparison, format string) error {
	head := []string{"TRANSPORT", "BEFORE " + c.Unit, "AFTER " + c.Unit, "AFTER/BEFORE", "95% INTERVAL", "VERDICT"}
	var rows [][]string
	for _, ch := range c.Transports {
		iv := "-"
		if ch.RatioLow != 0 || ch.RatioHigh != 0 {
			iv = fmt.Sprintf("[%.3f, %.3f]", ch.RatioLow, ch.RatioHigh)
		}
		rows = append(rows, []string{ch.Name, rate(ch.Before, 1), rate(ch.After, 1), fmt.Sprintf("%.3f×", ch.Ratio), iv, ch.Verdict})
	}
	verdict := "no transport is significantly slower"
	if len(c.Regressions) > 0 {
		verdict = "significantly slower: " + strings.Join(c.Regressions, ", ")
	}
	switch format {
	case "json":
		return writeJSON(w, c)
	case "markdown":
		fmt.Fprintf(w, "### %s → %s\n\n| %s |\n|%s\n", c.Before, c.After, strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		fmt.Fprintf(w, "\n%s (Welch's 95 %% interval of after/before over the runs of each).\n", verdict)
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
		fmt.Fprintf(w, "\n%s (Welch's 95 %% interval of after/before over the runs of each).\n", verdict)
		return nil
	}
	return fmt.Errorf("unknown output format %q: want table, markdown or json", format)
}
