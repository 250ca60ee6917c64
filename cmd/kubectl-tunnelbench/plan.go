package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func planCmd(out io.Writer) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "plan -f FILE",
		Short: "What a benchmark manifest will run and how long it takes at least, before applying it",
		Long: "plan reads a TunnelBenchmark manifest (- for standard input) and prints its runs (sweep points × " +
			"transports × repetitions), each run's length and the least time they take together, against spec.timeout. " +
			"It needs no cluster.",
		Example: `  # The runs a manifest makes and the least time they take, against spec.timeout
  kubectl tunnelbench plan -f first-benchmark.yaml

  # Check what init writes before applying it
  kubectl tunnelbench init --cnpg-cluster pg --transports direct,tls,ssh | kubectl tunnelbench plan -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var b []byte
			var err error
			if file == "-" {
				b, err = io.ReadAll(cmd.InOrStdin())
			} else {
				b, err = os.ReadFile(file)
			}
			if err != nil {
				return err
			}
			tb := &benchv1.TunnelBenchmark{}
			if err := yaml.UnmarshalStrict(b, tb); err != nil {
				return fmt.Errorf("%s is not a TunnelBenchmark: %w", file, err)
			}
			text, fits := plan(tb)
			if _, err := fmt.Fprint(out, text); err != nil {
				return err
			}
			if !fits {
				return fmt.Errorf("spec.timeout (%s) is shorter than the runs alone: the API server would refuse it", tb.TimeoutDuration())
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the manifest (- for standard input)")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// plan says what tb runs and how long its measured runs take at least, and whether spec.timeout
// covers them.
func plan(tb *benchv1.TunnelBenchmark) (string, bool) {
	var b strings.Builder
	points := ""
	if param, values := tb.Spec.Sweep.Parameter(); param != "" {
		vs := make([]string, len(values))
		for i, v := range values {
			vs[i] = fmt.Sprint(v)
		}
		points = fmt.Sprintf("%d points of %s (%s) × ", len(values), param, strings.Join(vs, ", "))
	}
	fmt.Fprintf(&b, "%s: %s%d transports × %d repetitions = %d runs, %s", orDash(tb.Name), points, len(tb.Spec.Transports),
		tb.Repetitions(), tb.TotalRuns(), tb.Order())
	if tb.Order() == benchv1.OrderInterleaved {
		fmt.Fprintf(&b, " (each round's %d runs in a random order)", tb.Points()*len(tb.Spec.Transports))
	}
	fmt.Fprintln(&b)
	least, known := tb.PlannedRunTime()
	if !known {
		fmt.Fprintf(&b, "the runs' length is not known before they run (a number of transactions, or a copy); "+
			"spec.timeout %s bounds them\n", tb.TimeoutDuration())
		return b.String(), true
	}
	run := least / max(1, time.Duration(tb.TotalRuns()))
	fmt.Fprintf(&b, "each run: %s warm-up + %s load; the runs take at least %s, without the pods' start and any "+
		"initialization; spec.timeout is %s\n", tb.WarmupDuration(), run-tb.WarmupDuration(), least, tb.TimeoutDuration())
	return b.String(), least <= tb.TimeoutDuration()
}
