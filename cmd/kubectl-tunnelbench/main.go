// Command kubectl-tunnelbench is the kubectl plugin of TunnelBench: `kubectl tunnelbench init` writes
// a first TunnelBenchmark, and `report`, `watch`, `compare`, `rerun`, `cancel`, `plan` and `history`
// read and run them with kubectl's own connection flags (--kubeconfig, --context, -n/--namespace, ...).
//
// Install: go install github.com/tunnelbench/tunnelbench/cmd/kubectl-tunnelbench@latest (or
// `make build`, which puts it in bin/), with the folder on PATH.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// exitRegression is the exit status of `compare --fail-on-regression` when a transport got
// significantly slower: distinct from 1 (the command failed), for CI pipelines.
const exitRegression = 3

func main() {
	if err := newRoot(os.Stdout).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		var regression *regressionError
		if errors.As(err, &regression) {
			os.Exit(exitRegression)
		}
		os.Exit(1)
	}
}

func newRoot(out io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "kubectl-tunnelbench",
		Short:         "Write, read and run TunnelBenchmarks: a first manifest, reports, live progress, comparisons",
		SilenceUsage:  true,
		SilenceErrors: true,
		Example: `  # Write a first benchmark of the CloudNativePG cluster pg of the current namespace
  kubectl tunnelbench init --cnpg-cluster pg --file first-benchmark.yaml

  # Once applied, follow it run by run, then print its answer
  kubectl tunnelbench watch first-benchmark

  # List the benchmarks of every namespace
  kubectl tunnelbench report -A`,
	}
	k := &kube{}
	k.bind(root.PersistentFlags())
	root.SetOut(out)
	root.AddCommand(initCmd(k, out), reportCmd(k, out), watchCmd(k, out), compareCmd(k, out), rerunCmd(k, out),
		cancelCmd(k, out), planCmd(k, out), historyCmd(k, out))
	return root
}
