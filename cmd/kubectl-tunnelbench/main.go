// Command kubectl-tunnelbench is the kubectl plugin of TunnelBench: `kubectl tunnelbench report`,
// `watch`, `compare`, `rerun` and `history` read and run TunnelBenchmarks with kubectl's own connection flags
// (--kubeconfig, --context, -n/--namespace, ...).
//
// Install: go install github.com/tunnelbench/tunnelbench/cmd/kubectl-tunnelbench@latest (or
// `make build`, which puts it in bin/), with the folder on PATH.
package main

import (
	"errors"
	"fmt"
	"os"

	"io"

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
		Short:         "Read and run TunnelBenchmarks: reports, live progress, comparisons",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	k := &kube{}
	k.bind(root.PersistentFlags())
	root.SetOut(out)
	root.AddCommand(reportCmd(k, out), watchCmd(k, out), compareCmd(k, out), rerunCmd(k, out), cancelCmd(k, out), planCmd(out),
		historyCmd(k, out))
	return root
}
