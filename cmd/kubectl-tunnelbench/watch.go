package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/present/render"
	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

func watchCmd(k *kube, out io.Writer) *cobra.Command {
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "watch NAME",
		Short: "Follow a benchmark: a progress bar per transport, then its report",
		Example: `  # A progress bar per transport until the benchmark ends, then its report
  kubectl tunnelbench watch direct-vs-tls

  # Read it every 10 seconds, in another namespace
  kubectl tunnelbench watch direct-vs-tls -n db-team --interval 10s`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			last := ""
			for {
				tb, err := k.get(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if view := progress(tb); view != last {
					if _, err := fmt.Fprint(out, view); err != nil {
						return err
					}
					last = view
				}
				if tb.Status.Phase.IsTerminal() {
					fmt.Fprintln(out)
					return render.Report(out, summary.Of(tb), "table")
				}
				select {
				case <-cmd.Context().Done():
					return cmd.Context().Err()
				case <-time.After(every):
				}
			}
		},
	}
	cmd.Flags().DurationVar(&every, "interval", 2*time.Second, "how often to read the benchmark")
	return cmd
}

// progress is the benchmark's state as a block of lines: its phase and what runs now, then a bar
// per transport of its runs done, with the running one's live figures (status.live).
func progress(tb *benchv1.TunnelBenchmark) string {
	var b strings.Builder
	now := "-"
	if c := meta.FindStatusCondition(tb.Status.Conditions, conditions.Progressing); c != nil && c.Status == "True" {
		now = c.Message
	}
	fmt.Fprintf(&b, "%s %s/%s: %s (%s runs) — %s\n", time.Now().Format("15:04:05"), tb.Namespace, tb.Name,
		orDash(string(tb.Status.Phase)), orDash(tb.Status.Progress), now)
	// Every point's runs count towards a transport's bar.
	reps := int(tb.Repetitions()) * tb.Points()
	for _, t := range tb.Spec.Transports {
		done := 0
		latest := ""
		for _, r := range tb.Status.AllResults() {
			if r.Transport != t.Name || len(r.Runs) == 0 {
				continue
			}
			done += len(r.Runs)
			run := r.Runs[len(r.Runs)-1]
			latest = fmt.Sprintf("  last run %.0f tps", run.TPS)
			if run.MBPerSecond != nil {
				latest = fmt.Sprintf("  last run %.2f MB/s", *run.MBPerSecond)
			}
		}
		if l := tb.Status.Live; l != nil && l.Transport == t.Name {
			at := ""
			if l.Point != "" {
				at = " at " + l.Point
			}
			latest = fmt.Sprintf("  round %d%s: %s %s, %.0f tps, %.3f ms", l.Round, at, l.Phase, elapsed(l), l.TPS, l.LatencyMs)
		}
		fmt.Fprintf(&b, "  %-20s %s %d/%d%s\n", t.Name, bar(done, reps, 24), done, reps, latest)
	}
	return b.String()
}

// elapsed is "5/10 s", or "5 s" for a load of a number of transactions.
func elapsed(l *benchv1.LiveRun) string {
	if l.DurationSeconds > 0 {
		return fmt.Sprintf("%.0f/%.0f s", l.ElapsedSeconds, l.DurationSeconds)
	}
	return fmt.Sprintf("%.0f s", l.ElapsedSeconds)
}

func bar(done, total, width int) string {
	if total <= 0 {
		return "[" + strings.Repeat(" ", width) + "]"
	}
	n := min(width, done*width/total)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}
