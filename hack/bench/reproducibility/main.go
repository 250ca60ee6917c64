// Command reproducibility measures how reproducible TunnelBench's answer is: it runs the same
// benchmark — direct and TLS (require), interleaved repetitions, each after a warm-up, through the
// tunnelbench-runner binary, as the operator's Jobs do — five times with 3 repetitions and five
// times with 5, against one local PostgreSQL, and prints the spread (coefficient of variation) of
// the reported median tps across the five benchmarks, with every run's figure.
//
//	go run ./hack/bench/reproducibility [-benchmarks 5] [-duration 4s] [-warmup 1s]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/report"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
	"github.com/tunnelbench/tunnelbench/internal/stats"
)

// target is the largest acceptable coefficient of variation of a benchmark's median tps.
const target = 0.05

var transports = []struct{ name, sslmode string }{{"direct", "disable"}, {"tls", "require"}}

func main() {
	benchmarks := flag.Int("benchmarks", 5, "benchmarks per repetition count")
	duration := flag.Duration("duration", 4*time.Second, "duration of each measured run")
	warmup := flag.Duration("warmup", time.Second, "warm-up before each run")
	flag.Parse()
	if err := run(*benchmarks, *duration, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "reproducibility:", err)
		os.Exit(1)
	}
}

func run(benchmarks int, duration, warmup time.Duration) error {
	work, err := os.MkdirTemp("", "tunnelbench-reproducibility-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	runnerBin := filepath.Join(work, "tunnelbench-runner")
	if out, err := exec.Command("go", "build", "-o", runnerBin, "./cmd/runner").CombinedOutput(); err != nil {
		return fmt.Errorf("cannot build the runner: %w: %s", err, out)
	}
	srv, err := pgtest.StartTemp(pgtest.Options{})
	if err != nil {
		return err
	}
	defer srv.Stop()
	if out, err := command(srv.Env("disable"), "pgbench", "-i", "-s", "10", "-q").CombinedOutput(); err != nil {
		return fmt.Errorf("pgbench -i: %w: %s", err, out)
	}
	load := runspec.Load{Builtin: "select-only", Protocol: "prepared", Clients: 4, Threads: 2, Duration: duration,
		ProgressInterval: time.Second}
	fmt.Printf("select-only, prepared, -c 4 -j 2, %s runs after a %s warm-up, direct and TLS (require) interleaved, "+
		"PostgreSQL on 127.0.0.1; %d benchmarks per repetition count\n\n", duration, warmup, benchmarks)
	fmt.Println("| repetitions | transport | median tps of each benchmark | CV of the medians | runs' CV (median) |")
	fmt.Println("|---|---|---|---|---|")
	worst := 0.0
	for _, reps := range []int{3, 5} {
		medians := map[string][]float64{}
		runCVs := map[string][]float64{}
		for range benchmarks {
			tps := map[string][]float64{}
			for range reps {
				for _, t := range transports {
					args := runspec.Run{Load: load, Warmup: warmup, Tunnels: 1, WaitTimeout: time.Minute}.Args()
					v, err := runnerRun(srv.Env(t.sslmode), runnerBin, work, args)
					if err != nil {
						return fmt.Errorf("%s: %w", t.name, err)
					}
					tps[t.name] = append(tps[t.name], v)
				}
			}
			for _, t := range transports {
				s := stats.Summarize(tps[t.name])
				medians[t.name] = append(medians[t.name], s.Median)
				runCVs[t.name] = append(runCVs[t.name], s.CV)
			}
		}
		for _, t := range transports {
			s := stats.Summarize(medians[t.name])
			worst = max(worst, s.CV)
			var cells []string
			for _, m := range medians[t.name] {
				cells = append(cells, fmt.Sprintf("%.0f", m))
			}
			fmt.Printf("| %d | %s | %s | %.1f %% | %.1f %% |\n", reps, t.name, strings.Join(cells, ", "), 100*s.CV,
				100*stats.Summarize(runCVs[t.name]).Median)
		}
	}
	verdict := "meets"
	if worst > target {
		verdict = "ABOVE"
	}
	fmt.Printf("\nlargest CV of the reported median: %.1f %% (%s the target %.0f %%)\n", 100*worst, verdict, 100*target)
	return nil
}

func command(env map[string]string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// runnerRun runs the runner with a run's flags and returns the measured tps.
func runnerRun(env map[string]string, runnerBin, work string, runArgs []string) (float64, error) {
	termLog := filepath.Join(work, "termination-log")
	cmdArgs := append([]string{"run", "--termination-log", termLog}, runArgs...)
	cmd := command(env, runnerBin, cmdArgs...)
	cmd.Env = append(cmd.Env, "HOME="+work)
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%w: %s", err, out)
	}
	msg, err := os.ReadFile(termLog)
	if err != nil {
		return 0, err
	}
	rep, err := report.Decode(string(msg))
	if err != nil {
		return 0, err
	}
	if rep.Result == nil {
		return 0, fmt.Errorf("the runner reported no result: %s", msg)
	}
	return rep.Result.TPS, nil
}
