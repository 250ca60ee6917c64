package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/history"
	"github.com/tunnelbench/tunnelbench/internal/present/render"
	"github.com/tunnelbench/tunnelbench/internal/present/trend"
)

// storeEnv names the environment variable that may hold the history store's URI.
const storeEnv = "TUNNELBENCH_HISTORY_URI"

func historyCmd(k *kube, out io.Writer) *cobra.Command {
	var output, file, store string
	var limit int
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "A ScheduledTunnelBenchmark's results over time, per transport, with the results found regressed",
		Long: "history NAME (or NAMESPACE/NAME) prints a schedule's results, oldest first: each benchmark's ratio to " +
			"the baseline and absolute figure per transport, a result found regressed marked. It reads the history " +
			"store when --store (a file holding its URI) or " + storeEnv + " gives it, else the benchmarks the schedule keeps. -o html " +
			"writes a page with each figure's trend and its change points to --file (default NAME-history.html).",
		Example: `  # A schedule's results over time, from the benchmarks it keeps
  kubectl tunnelbench history nightly

  # From the history store, whose URI (and password) is in a file, never on the command line
  kubectl tunnelbench history nightly --store ./history-uri --limit 100

  # Each figure's trend and its change points as an HTML page
  kubectl tunnelbench history nightly -o html --file nightly-history.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(render.HistoryFormats, output) {
				return fmt.Errorf("-o %s: want one of %s", output, strings.Join(render.HistoryFormats, ", "))
			}
			uri, err := storeURI(store)
			if err != nil {
				return err
			}
			h, err := readHistory(cmd.Context(), k, args[0], uri, limit)
			if err != nil {
				return err
			}
			if output != "html" || file == "-" {
				return render.History(out, h, output)
			}
			if file == "" {
				file = h.Schedule + "-history.html"
			}
			return writeFile(out, file, func(w io.Writer) error { return render.History(w, h, output) })
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: "+strings.Join(render.HistoryFormats, ", "))
	cmd.Flags().StringVar(&file, "file", "", "where -o html writes (default NAME-history.html; - for standard output)")
	cmd.Flags().StringVar(&store, "store", "", "a file holding the history store's URI (its Secret's key uri); default $"+storeEnv+
		" (the URI itself), else the kept benchmarks")
	cmd.Flags().IntVar(&limit, "limit", 50, "the newest benchmarks to read from the store")
	return cmd
}

// storeURI is the history store's URI: read from the file --store names, else $TUNNELBENCH_HISTORY_URI.
// The URI holds the store's password, so it is never taken from the command line, where ps, the
// shell's history and audit logs would keep it: --store given a URI is refused, saying so.
func storeURI(flag string) (string, error) {
	if flag == "" {
		return os.Getenv(storeEnv), nil
	}
	if strings.Contains(flag, "://") || strings.Contains(flag, "=") {
		return "", fmt.Errorf("--store takes a file holding the store's URI, not the URI: on the command line its password " +
			"would be in ps, the shell's history and audit logs; write it to a file (or a mounted Secret's key uri), or set $" + storeEnv)
	}
	b, err := os.ReadFile(flag)
	if err != nil {
		return "", fmt.Errorf("--store: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// readHistory reads a schedule's points from the store, or from the benchmarks it keeps.
func readHistory(ctx context.Context, k *kube, arg, storeURI string, limit int) (trend.History, error) {
	key, err := k.key(arg)
	if err != nil {
		return trend.History{}, err
	}
	c, err := k.client()
	if err != nil {
		return trend.History{}, err
	}
	stb := &benchv1.ScheduledTunnelBenchmark{}
	if err := c.Get(ctx, key, stb); err != nil {
		return trend.History{}, fmt.Errorf("schedule %s: %w", key, err)
	}
	h := trend.History{Namespace: key.Namespace, Schedule: key.Name}
	if storeURI != "" {
		st, err := history.Open(storeURI)
		if err != nil {
			return h, err
		}
		defer st.Close()
		points, err := st.Series(ctx, history.SeriesKey{Namespace: key.Namespace, Schedule: key.Name,
			TemplateHash: stb.TemplateHash()}, limit)
		if err != nil {
			return h, fmt.Errorf("the history store: %s", st.Mask(err.Error()))
		}
		h.Source, h.Points = "store", trend.FromStore(points)
		return h, nil
	}
	list := &benchv1.TunnelBenchmarkList{}
	if err := c.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{
		benchv1.LabelSchedule: key.Name, benchv1.LabelTemplateHash: stb.TemplateHash()}); err != nil {
		return h, err
	}
	h.Source, h.Points = "kept benchmarks", trend.FromBenchmarks(list.Items)
	return h, nil
}

// writeFile writes a page to path with write, and says where.
func writeFile(out io.Writer, path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	abs, _ := filepath.Abs(path)
	fmt.Fprintf(out, "wrote %s\n", abs)
	return nil
}
