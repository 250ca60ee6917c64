package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/crossbench"
	"github.com/tunnelbench/tunnelbench/internal/present/render"
	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

func reportCmd(k *kube, out io.Writer) *cobra.Command {
	var output, file string
	var all bool
	cmd := &cobra.Command{
		Use:   "report [NAME]",
		Short: "A benchmark's answer: tps with intervals, verdicts, latency, connection cost, link, path, provenance",
		Long: "report NAME prints a benchmark's results (partial while it runs). Without NAME it lists the benchmarks of " +
			"the namespace (-A: of every namespace). -o html writes one self-contained page with charts to --file " +
			"(default NAME.html; - for standard output).",
		Example: `  # List the benchmarks of the current namespace, with their phase and best transport
  kubectl tunnelbench report

  # A benchmark's answer as Markdown, for a pull request or an issue
  kubectl tunnelbench report direct-vs-tls -o markdown

  # One self-contained HTML page with charts
  kubectl tunnelbench report direct-vs-tls -o html --file direct-vs-tls.html`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return list(cmd, k, out, all)
			}
			if !slices.Contains(render.Formats, output) {
				return fmt.Errorf("-o %s: want one of %s", output, strings.Join(render.Formats, ", "))
			}
			tb, err := k.get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			s := summary.Of(tb)
			if output != "html" || file == "-" {
				return render.Report(out, s, output)
			}
			if file == "" {
				file = tb.Name + ".html"
			}
			return writeFile(out, file, func(w io.Writer) error { return render.Report(w, s, output) })
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: "+strings.Join(render.Formats, ", "))
	cmd.Flags().StringVar(&file, "file", "", "where -o html writes (default NAME.html; - for standard output)")
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the benchmarks of every namespace")
	return cmd
}

// list prints the benchmarks of a namespace, or of all.
func list(cmd *cobra.Command, k *kube, out io.Writer, all bool) error {
	c, err := k.client()
	if err != nil {
		return err
	}
	var opts []client.ListOption
	if !all {
		ns, err := k.namespace()
		if err != nil {
			return err
		}
		opts = append(opts, client.InNamespace(ns))
	}
	tbs := &benchv1.TunnelBenchmarkList{}
	if err := c.List(cmd.Context(), tbs, opts...); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tPHASE\tPROGRESS\tBEST\tAGE")
	for _, tb := range tbs.Items {
		best := "-"
		if b := tb.Status.Best; b != nil {
			best = b.Transport
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", tb.Namespace, tb.Name, orDash(string(tb.Status.Phase)),
			orDash(tb.Status.Progress), best, duration.HumanDuration(time.Since(tb.CreationTimestamp.Time)))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// regressionError is compare's finding that a transport got slower by more than the threshold.
type regressionError struct{ transports []string }

func (e *regressionError) Error() string {
	return "slower by more than the threshold: " + strings.Join(e.transports, ", ")
}

func compareCmd(k *kube, out io.Writer) *cobra.Command {
	var output string
	var failOnRegression bool
	var threshold float64
	cmd := &cobra.Command{
		Use:   "compare BEFORE AFTER",
		Short: "Two benchmarks of the same setup before and after a change: each transport's change relative to the baseline",
		Long: "compare reads two completed benchmarks (NAME or NAMESPACE/NAME) of the same load, link, server and " +
			"baseline, and for every other transport both ran, its ratio to the baseline after over before — each " +
			"benchmark's own paired ratios, so that the drift of the machine between the benchmarks cancels — with " +
			"Welch's interval over their rounds, adjusted across the transports (Holm). A change is called only when " +
			"its whole interval lies beyond --threshold. Benchmarks that cannot be compared are refused with the " +
			"reason, as is a transport with fewer than 2 rounds. With --fail-on-regression it exits with status 3 " +
			"when a transport got slower, for CI pipelines.",
		Example: `  # Each transport's change between a benchmark before an upgrade and one after
  kubectl tunnelbench compare before-upgrade after-upgrade

  # In CI: exit with status 3 when a transport got slower by more than 5 %
  kubectl tunnelbench compare db-team/nightly-1 db-team/nightly-2 --threshold 0.05 --fail-on-regression`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			before, err := k.get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			after, err := k.get(cmd.Context(), args[1])
			if err != nil {
				return err
			}
			c, err := crossbench.Compare(before, after, threshold)
			if err != nil {
				return err
			}
			if err := render.Compare(out, c, output); err != nil {
				return err
			}
			if failOnRegression && len(c.Regressions) > 0 {
				return &regressionError{transports: c.Regressions}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table, markdown or json")
	cmd.Flags().BoolVar(&failOnRegression, "fail-on-regression", false,
		"exit with status 3 when a transport got slower by more than the threshold")
	cmd.Flags().Float64Var(&threshold, "threshold", crossbench.DefaultThreshold,
		"the smallest change called, as a fraction (0.03: 3 %); below it a change is within what the machine drifts between benchmarks")
	return cmd
}

func rerunCmd(k *kube, out io.Writer) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "rerun NAME",
		Short: "Run a benchmark again: a new TunnelBenchmark with the same spec (specs are immutable)",
		Example: `  # Run direct-vs-tls again under a generated name (direct-vs-tls- and a suffix)
  kubectl tunnelbench rerun direct-vs-tls

  # Run it again under a name of your own, to compare the two afterwards
  kubectl tunnelbench rerun direct-vs-tls --name direct-vs-tls-after-upgrade`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			old, err := k.get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			c, err := k.client()
			if err != nil {
				return err
			}
			tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: old.Namespace, Name: name,
				Labels: old.Labels, Annotations: map[string]string{benchv1.GroupVersion.Group + "/rerun-of": old.Name}},
				Spec: *old.Spec.DeepCopy()}
			// A rerun of a cancelled benchmark runs.
			tb.Spec.Cancel = false
			if name == "" {
				// A name the API completes, so that reruns never collide.
				tb.GenerateName = old.Name + "-"
			}
			if err := c.Create(cmd.Context(), tb); err != nil {
				return err
			}
			fmt.Fprintf(out, "tunnelbenchmark.%s/%s created (a rerun of %s)\n", benchv1.GroupVersion.Group, tb.Name, old.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the new benchmark's name (default: NAME- and a generated suffix)")
	return cmd
}

func cancelCmd(k *kube, out io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel NAME",
		Short: "Stop a benchmark: its running Job and peers go, the runs that finished stay (spec.cancel)",
		Example: `  # Stop a running benchmark; the runs that finished stay in its status
  kubectl tunnelbench cancel direct-vs-tls

  # Stop one in another namespace
  kubectl tunnelbench cancel db-team/nightly-42`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tb, err := k.get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			c, err := k.client()
			if err != nil {
				return err
			}
			patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`))
			if err := c.Patch(cmd.Context(), tb, patch); err != nil {
				return err
			}
			fmt.Fprintf(out, "tunnelbenchmark.%s/%s cancelled\n", benchv1.GroupVersion.Group, tb.Name)
			return nil
		},
	}
}
