package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/crossbench"
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
			"design and the rounds the target is expected to take, simulated through the operator's own stopping rule " +
			"on paths drawn like its pilots': the completed benchmarks of the same setup in the manifest's namespace " +
			"(or --like one). Where the pilots' runs carry their own error (progress reports every second), it says " +
			"how much of the spread is within the runs and how much drift between rounds, and advises the run " +
			"length that reaches the target soonest.",
		Example: `  # The runs a manifest makes and the least time they take, against spec.timeout
  kubectl tunnelbench plan -f first-benchmark.yaml

  # The rounds a precision target will take, from the earlier benchmarks of the same setup
  kubectl tunnelbench plan -f precise.yaml

  # ... from one of them only
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
				pilots, why, err := findPilots(cmd.Context(), k, tb, like)
				if err != nil {
					return err
				}
				planned, err := planPrecision(tb, pilots, why)
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
		"the one pilot a precision target's rounds are planned from (default: every completed benchmark of the same setup "+
		"in the namespace, the newest "+fmt.Sprint(maxPilots)+")")
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

// maxPilots bounds the pilots a plan pools: the newest of them, as the machine and the paths
// drift.
const maxPilots = 5

// findPilots are the completed benchmarks a precision target is planned from: like alone when
// named (an error if it is no pilot of tb), else the newest of the same setup in tb's namespace.
// Without them, why says so: a plan needs no cluster, and tells what it would need.
func findPilots(ctx context.Context, k *kube, tb *benchv1.TunnelBenchmark, like string) ([]*benchv1.TunnelBenchmark, string, error) {
	c, err := k.client()
	if err != nil {
		if like != "" {
			return nil, "", err
		}
		return nil, fmt.Sprintf("no cluster to find one in (%v)", err), nil
	}
	planned, err := defaulted(ctx, k, c, tb)
	if err != nil {
		if like != "" {
			return nil, "", err
		}
		return nil, fmt.Sprintf("the API server did not take the manifest to compare it with earlier benchmarks (%v)", err), nil
	}
	if like != "" {
		pilot, err := k.get(ctx, like)
		if err != nil {
			return nil, "", err
		}
		if why := pilotProblem(planned, pilot); why != "" {
			return nil, "", fmt.Errorf("%s/%s is no pilot for this manifest: %s", pilot.Namespace, pilot.Name, why)
		}
		return []*benchv1.TunnelBenchmark{pilot}, "", nil
	}
	list := &benchv1.TunnelBenchmarkList{}
	if err := c.List(ctx, list, client.InNamespace(planned.Namespace)); err != nil {
		return nil, fmt.Sprintf("the benchmarks of %s could not be listed (%v)", planned.Namespace, err), nil
	}
	pilots := choosePilots(planned, list.Items)
	if len(pilots) == 0 {
		return nil, fmt.Sprintf("no completed benchmark of the same setup in %s", planned.Namespace), nil
	}
	return pilots, "", nil
}

// defaulted is tb as the API server would store it, its defaults filled in (a dry run of its
// creation under a generated name, so that an existing one of its name does not refuse it): what
// earlier benchmarks, stored with theirs, are compared with.
func defaulted(ctx context.Context, k *kube, c client.Client, tb *benchv1.TunnelBenchmark) (*benchv1.TunnelBenchmark, error) {
	out := tb.DeepCopy()
	out.ResourceVersion, out.Status = "", benchv1.TunnelBenchmarkStatus{}
	out.GenerateName, out.Name = "plan-", ""
	if out.Namespace == "" {
		ns, err := k.namespace()
		if err != nil {
			return nil, err
		}
		out.Namespace = ns
	}
	if err := c.Create(ctx, out, client.DryRunAll); err != nil {
		return nil, err
	}
	return out, nil
}

// pilotProblem says why pilot cannot plan planned's rounds, or "": it must have completed,
// interleaved (its rounds pair with its baseline), with the same setup (crossbench).
func pilotProblem(planned, pilot *benchv1.TunnelBenchmark) string {
	switch {
	case pilot.Status.Phase != benchv1.PhaseCompleted:
		return "it has not completed"
	case pilot.Order() != benchv1.OrderInterleaved:
		return "its rounds ran in sequence, with no pairs to its baseline"
	}
	if d := crossbench.PilotDifferences(planned, pilot); len(d) > 0 {
		return fmt.Sprintf("its setup differs in %s", strings.Join(d, ", "))
	}
	return ""
}

// choosePilots are the newest candidates (by completion) that can plan planned's rounds, at most
// maxPilots.
func choosePilots(planned *benchv1.TunnelBenchmark, candidates []benchv1.TunnelBenchmark) []*benchv1.TunnelBenchmark {
	var out []*benchv1.TunnelBenchmark
	for i := range candidates {
		if pilotProblem(planned, &candidates[i]) == "" {
			out = append(out, &candidates[i])
		}
	}
	completed := func(tb *benchv1.TunnelBenchmark) time.Time {
		if tb.Status.CompletionTime == nil {
			return time.Time{}
		}
		return tb.Status.CompletionTime.Time
	}
	slices.SortStableFunc(out, func(a, b *benchv1.TunnelBenchmark) int { return completed(b).Compare(completed(a)) })
	return out[:min(len(out), maxPilots)]
}

// planPrecision says what a precision target looks like and, from pilots (completed benchmarks of
// the same setup), how many rounds it is expected to take, where the pilots' noise sat and what
// run length reaches the target soonest. Without pilots, why says what is missing.
func planPrecision(tb *benchv1.TunnelBenchmark, pilots []*benchv1.TunnelBenchmark, why string) (string, error) {
	var b strings.Builder
	design := stats.Sequential{Rounds: int(tb.Repetitions())}
	fmt.Fprintf(&b, "precision target %s: looks after rounds %d to %d, each interval at %.2f %% so that all of them "+
		"together keep 95 %%\n", tb.Spec.Load.Precision.Goal, stats.FirstLook, tb.Repetitions(),
		100*(1-design.Nominal(stats.FamilyAlpha)))
	if len(pilots) == 0 {
		fmt.Fprintf(&b, "PLANNED: needs a pilot (%s): run the transports once without the target (3 repetitions, "+
			"spec.load.progressInterval 1s), then plan again\n", why)
		return b.String(), nil
	}
	var sets [][]precision.Path
	var overheads []float64
	for _, pilot := range pilots {
		paths := precision.Pilot(pilot)
		if len(paths) == 0 {
			continue
		}
		sets = append(sets, paths)
		for _, p := range paths {
			fmt.Fprintf(&b, "  %s in %s: ratio %.3f, spread %.1f %% a round over %d rounds; %s\n", p.Transport, pilot.Name,
				math.Exp(p.LogMean), 100*p.LogSD, p.Pairs, p.Components())
		}
		if o, ok := precision.RunOverhead(pilot); ok {
			overheads = append(overheads, o.Seconds())
		}
	}
	if len(sets) == 0 {
		return "", fmt.Errorf("%s has no transport with 2 paired rounds against %s: nothing to plan from",
			pilots[0].Name, tb.Spec.Transports[0].Name)
	}
	length := tb.Spec.Load.Duration
	if length == nil {
		fmt.Fprintf(&b, "PLANNED: %s\n", precision.Plan(tb.Spec.Load.Precision, int(tb.Repetitions()),
			plannedPaths(tb, precision.Pool(sets, 0)), 1))
		return b.String(), nil
	}
	seconds := length.Seconds()
	paths := plannedPaths(tb, precision.Pool(sets, seconds))
	// A run's cost besides its load, as the pilots measured it; their warm-up and 10 s for the
	// pods' start when they did not.
	overhead := tb.WarmupDuration() + 10*time.Second
	if len(overheads) > 0 {
		overhead = time.Duration(stats.Median(overheads) * float64(time.Second))
	}
	runs := tb.Points() * len(tb.Spec.Transports)
	at, best := precision.BestLength(tb.Spec.Load.Precision, int(tb.Repetitions()), paths, runs, overhead, seconds)
	fmt.Fprintf(&b, "PLANNED: %s; about %s (%d runs a round, each %s besides its load, as the pilots measured)\n",
		at.Planned, at.Time.Round(time.Second), runs, overhead.Round(time.Second))
	if best.Seconds != at.Seconds {
		fmt.Fprintf(&b, "ADVICE: runs of %s (spec.load.duration) settle it sooner or more surely: %s; about %s\n",
			time.Duration(best.Seconds*float64(time.Second)), best.Planned, best.Time.Round(time.Second))
	}
	return b.String(), nil
}

// plannedPaths are tb's transports after its baseline as the pilots measured them; a transport
// they did not measure is taken as the baseline's equal with the widest spread measured: the
// hardest to settle.
func plannedPaths(tb *benchv1.TunnelBenchmark, measured []precision.Path) []precision.Path {
	var out []precision.Path
	for _, t := range tb.Spec.Transports[1:] {
		p := precision.Path{Transport: t.Name}
		for _, q := range measured {
			if q.LogSD > p.LogSD {
				p.LogSD, p.Within, p.Seconds, p.DF = q.LogSD, q.Within, q.Seconds, q.DF
			}
		}
		for _, q := range measured {
			if q.Transport == t.Name {
				p = q
			}
		}
		out = append(out, p)
	}
	return out
}
