// Command harness measures the runner's overhead: it runs bare pgbench and pgbench through the
// tunnelbench-runner binary with the same load against the same local PostgreSQL, interleaved
// (A B B A ...) so that drift and warm-up hit both alike, and prints the ratio of their tps.
//
//	go run ./hack/bench/harness [-rounds 6] [-duration 10s] [-clients 4] [-threads 2]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tunnelbench/tunnelbench/hack/bench/runnerbin"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
)

// target is the lowest acceptable runner/bare tps ratio.
const target = 0.97

func main() {
	rounds := flag.Int("rounds", 6, "runs of each kind")
	duration := flag.Duration("duration", 10*time.Second, "duration of each run")
	clients := flag.Int("clients", 4, "pgbench clients")
	threads := flag.Int("threads", 2, "pgbench threads")
	builtin := flag.String("builtin", "select-only", "pgbench builtin script")
	protocol := flag.String("protocol", "prepared", "pgbench query mode")
	sslmode := flag.String("sslmode", "disable", "libpq sslmode of both kinds of run")
	flag.Parse()
	if err := run(*rounds, *duration, *clients, *threads, *builtin, *protocol, *sslmode); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

func run(rounds int, duration time.Duration, clients, threads int, builtin, protocol, sslmode string) error {
	b, err := runnerbin.Start("harness")
	if err != nil {
		return err
	}
	defer b.Stop()
	srv := b.Server
	libpq := runnerbin.Env(srv.Env(sslmode))
	env := append(os.Environ(), libpq...)

	// One load for both kinds of run: bare pgbench gets its arguments, the runner its flags, which
	// it turns into the same arguments.
	load := runspec.Load{Builtin: builtin, Protocol: protocol, Clients: clients, Threads: threads,
		Duration: duration, ProgressInterval: 5 * time.Second}
	bareArgs := pgbench.LoadArgs(load)
	runnerRun := runspec.Run{Load: load, Tunnels: 1, WaitTimeout: time.Minute}
	fmt.Printf("pgbench %s, sslmode=%s, %d rounds, PostgreSQL %s on 127.0.0.1\n\n",
		strings.Join(bareArgs, " "), sslmode, rounds, filepath.Base(filepath.Dir(srv.BinDir)))
	bare, viaRunner, err := runnerbin.Interleave(rounds,
		runnerbin.Kind{Name: "bare", Run: func() (float64, error) { return bareRun(env, bareArgs) }},
		runnerbin.Kind{Name: "runner", Run: func() (float64, error) {
			rep, err := b.Run(libpq, runnerRun)
			if err != nil {
				return 0, err
			}
			return rep.Result.TPS, nil
		}})
	if err != nil {
		return err
	}
	ratio := stats.Median(viaRunner) / stats.Median(bare)
	verdict := "meets"
	if ratio < target {
		verdict = "BELOW"
	}
	fmt.Printf("\nmedian tps: bare %.0f, runner %.0f; runner/bare = %.3f (%s the target %.2f)\n",
		stats.Median(bare), stats.Median(viaRunner), ratio, verdict, target)
	if ratio < target {
		return fmt.Errorf("runner/bare ratio %.3f is below %.2f", ratio, target)
	}
	return nil
}

func command(env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	return cmd
}

func bareRun(env, args []string) (float64, error) {
	out, err := command(env, "pgbench", args...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%w: %s", err, pgbench.LastError(string(out)))
	}
	res, err := pgbench.Parse(bytes.NewReader(out))
	if err != nil {
		return 0, err
	}
	return res.TPS, nil
}
