// Command harness measures the runner's overhead: it runs bare pgbench and pgbench through the
// tunnelbench-runner binary with the same load against the same local PostgreSQL, interleaved
// (A B B A ...) so that drift and warm-up hit both alike, and prints the ratio of their tps. Then
// what the transaction log the runner adds (-l, and --sampling-rate when it samples) costs the
// client: bare pgbench with and without the flags the runner's own run executed, interleaved, by
// tps and by pgbench's CPU per transaction (its user and system time), which does not drift with
// the server's share of the cores as tps does.
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
	"slices"
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
	// The verdict reads the paired ratio's interval, not one figure: runs that differ by ±15 %
	// leave a few percent either way undecided, and saying so is the answer.
	paired, err := stats.PairedRatio(bare, viaRunner)
	if err != nil {
		return err
	}
	verdict := "undecided against"
	switch {
	case paired.Low >= target:
		verdict = "meets"
	case paired.High < target:
		verdict = "BELOW"
	}
	fmt.Printf("\nmedian tps: bare %.0f, runner %.0f; runner/bare paired %.3f [%.3f, %.3f] (95 %%, %d rounds: %s the target %.2f)\n",
		stats.Median(bare), stats.Median(viaRunner), paired.Estimate, paired.Low, paired.High, paired.N, verdict, target)
	// What the runner adds most is the transaction log: measured apart, whatever the ratio.
	rep, err := b.Run(libpq, runnerRun)
	if err != nil {
		return err
	}
	if err := transactionLog(env, bareArgs, logFlags(rep.Executed), rounds); err != nil {
		return err
	}
	if paired.High < target {
		return fmt.Errorf("runner/bare %.3f [%.3f, %.3f] is below %.2f", paired.Estimate, paired.Low, paired.High, target)
	}
	return nil
}

// logFlags are the transaction log's flags in the command the runner executed, its prefix
// replaced by one of this run's (pgbench adds .pid and .thread to it).
func logFlags(executed string) []string {
	var flags []string
	for _, f := range strings.Fields(executed) {
		switch {
		case f == "-l":
			flags = append(flags, f)
		case strings.HasPrefix(f, "--log-prefix="):
			flags = append(flags, "--log-prefix="+filepath.Join(os.TempDir(), "tunnelbench-harness-log"))
		case strings.HasPrefix(f, "--sampling-rate="):
			flags = append(flags, f)
		}
	}
	return flags
}

// measured is one bare run: its tps and pgbench's CPU µs per transaction.
type measured struct{ tps, cpuMicros float64 }

// transactionLog runs bare pgbench without and with the log flags, interleaved, and prints each
// round and the paired ratios with their 95 % intervals.
func transactionLog(env, args, flags []string, rounds int) error {
	fmt.Printf("\nthe transaction log: pgbench %s, without and with %s\n\n", strings.Join(args, " "), strings.Join(flags, " "))
	fmt.Println("| round | order | without: tps | with: tps | without: CPU µs/tx | with: CPU µs/tx |")
	fmt.Println("|---|---|---|---|---|---|")
	var without, with []measured
	for i := range rounds {
		withFirst := i%2 == 1
		var a, b measured
		var err error
		for _, logged := range []bool{withFirst, !withFirst} {
			runArgs := args
			if logged {
				runArgs = append(slices.Clone(args), flags...)
			}
			m, runErr := bareMeasured(env, runArgs)
			if runErr != nil {
				return fmt.Errorf("round %d: %w", i+1, runErr)
			}
			if logged {
				b = m
			} else {
				a = m
			}
			err = cleanLogs()
		}
		if err != nil {
			return err
		}
		order := map[bool]string{false: "without→with", true: "with→without"}[withFirst]
		fmt.Printf("| %d | %s | %.0f | %.0f | %.2f | %.2f |\n", i+1, order, a.tps, b.tps, a.cpuMicros, b.cpuMicros)
		without, with = append(without, a), append(with, b)
	}
	pick := func(ms []measured, f func(measured) float64) []float64 {
		out := make([]float64, len(ms))
		for i, m := range ms {
			out[i] = f(m)
		}
		return out
	}
	for _, fig := range []struct {
		name string
		of   func(measured) float64
	}{{"tps", func(m measured) float64 { return m.tps }}, {"CPU µs per transaction", func(m measured) float64 { return m.cpuMicros }}} {
		r, err := stats.PairedRatio(pick(without, fig.of), pick(with, fig.of))
		if err != nil {
			return fmt.Errorf("%s: %w", fig.name, err)
		}
		fmt.Printf("with/without, %s: %.3f [%.3f, %.3f] (paired, 95 %%, %d rounds; median %.4g without, %.4g with)\n",
			fig.name, r.Estimate, r.Low, r.High, r.N, stats.Median(pick(without, fig.of)), stats.Median(pick(with, fig.of)))
	}
	return nil
}

// bareMeasured runs pgbench and reads its tps and its CPU time per transaction.
func bareMeasured(env, args []string) (measured, error) {
	cmd := command(env, "pgbench", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return measured{}, fmt.Errorf("%w: %s", err, pgbench.LastError(string(out)))
	}
	res, err := pgbench.Parse(bytes.NewReader(out))
	if err != nil {
		return measured{}, err
	}
	if res.Transactions <= 0 {
		return measured{}, fmt.Errorf("pgbench ran no transaction")
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return measured{tps: res.TPS, cpuMicros: float64(cpu.Microseconds()) / float64(res.Transactions)}, nil
}

// cleanLogs removes the logs a run with the flags wrote.
func cleanLogs() error {
	logs, err := filepath.Glob(filepath.Join(os.TempDir(), "tunnelbench-harness-log*"))
	if err != nil {
		return err
	}
	for _, f := range logs {
		if err := os.Remove(f); err != nil {
			return err
		}
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
