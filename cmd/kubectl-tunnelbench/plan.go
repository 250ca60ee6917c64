package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/precision"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
)

func planCmd(k *kube, out io.Writer) *cobra.Command {
	var file, like string
	cmd := &cobra.Command{
		Use:   "plan -f FILE [--like NAME]",
		Short: "What a benchmark manifest will run and how long it takes at least, before applying it",
		Long: "plan reads a TunnelBenchmark manifest (- for standard input) and prints its runs (sweep points × " +
			"transports × repetitions), each run's length and the least time they take together, against spec.timeout. " +
			"It needs no cluster. For a manifest with a precision target (spec.load.precision) it prints the sequential " +
			"design, and with --like, a completed benchmark of the same transports (a pilot), the rounds the target is " +
			"expected to take: simulated through the operator's own stopping rule on paths drawn like the pilot's.",
		Example: `  # The runs a manifest makes and the least time they take, against spec.timeout
  kubectl tunnelbench plan -f first-benchmark.yaml

  # Check what init writes before applying it
  kubectl tunnelbench init --cnpg-cluster pg --transports direct,tls,ssh | kubectl tunnelbench plan -f -

  # The rounds a precision target will take, from an earlier benchmark of the same paths
  kubectl tunnelbench plan -f precise.yaml --like direct-vs-tls`,
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
			if tb.Spec.Load.Precision != nil {
				var pilot *benchv1.TunnelBenchmark
				if like != "" {
					if pilot, err = k.get(cmd.Context(), like); err != nil {
						return err
					}
				}
				planned, err := planPrecision(tb, pilot)
				if err != nil {
					return err
				}
				text += planned
			}
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
	cmd.Flags().StringVar(&like, "like", "", "a completed benchmark (NAME or NAMESPACE/NAME) of the same transports: "+
		"the pilot a precision target's rounds are planned from")
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

// planPrecision says what a precision target looks like and, from a pilot (a completed benchmark
// whose first transport is the manifest's baseline), how many rounds it is expected to take.
func planPrecision(tb, pilot *benchv1.TunnelBenchmark) (string, error) {
	var b strings.Builder
	design := stats.Sequential{Rounds: int(tb.Repetitions())}
	fmt.Fprintf(&b, "precision target %s: looks after rounds %d to %d, each interval at %.2f %% so that all of them "+
		"together keep 95 %%\n", tb.Spec.Load.Precision.Goal, stats.FirstLook, tb.Repetitions(),
		100*(1-design.Nominal(stats.FamilyAlpha)))
	if pilot == nil {
		b.WriteString("PLANNED: needs a pilot: run the transports once without the target (3 repetitions), then " +
			"plan --like it\n")
		return b.String(), nil
	}
	if pilot.Status.Phase != benchv1.PhaseCompleted || len(pilot.Spec.Transports) == 0 ||
		pilot.Spec.Transports[0].Name != tb.Spec.Transports[0].Name {
		return "", fmt.Errorf("%s/%s is no pilot for this manifest: it must be completed and compare with the same baseline (%s)",
			pilot.Namespace, pilot.Name, tb.Spec.Transports[0].Name)
	}
	paths := precision.Pilot(pilot)
	if len(paths) == 0 {
		return "", fmt.Errorf("%s/%s has no transport with 2 paired rounds against %s: nothing to plan from",
			pilot.Namespace, pilot.Name, tb.Spec.Transports[0].Name)
	}
	for _, p := range paths {
		fmt.Fprintf(&b, "  %s in %s: ratio %.3f, spread %.1f %% a round over %d rounds\n", p.Transport, pilot.Name,
			math.Exp(p.LogMean), 100*p.LogSD, p.Pairs)
	}
	// A transport the pilot did not measure is taken as the baseline's equal with the widest
	// spread measured: the hardest to settle.
	var planned []precision.Path
	for _, t := range tb.Spec.Transports[1:] {
		p := precision.Path{Transport: t.Name}
		for _, q := range paths {
			p.LogSD = max(p.LogSD, q.LogSD)
		}
		for _, q := range paths {
			if q.Transport == t.Name {
				p = q
			}
		}
		planned = append(planned, p)
	}
	fmt.Fprintf(&b, "PLANNED: %s\n", precision.Plan(tb.Spec.Load.Precision, int(tb.Repetitions()), planned, 1))
	return b.String(), nil
}
