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
	"strings"
	"time"

	"github.com/tunnelbench/tunnelbench/hack/bench/runnerbin"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
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
	if benchmarks < 2 {
		return fmt.Errorf("-benchmarks %d: the spread of the medians needs at least 2", benchmarks)
	}
	b, err := runnerbin.Start("reproducibility")
	if err != nil {
		return err
	}
	defer b.Stop()
	load := runspec.Load{Builtin: "select-only", Protocol: "prepared", Clients: 4, Threads: 2, Duration: duration,
		ProgressInterval: time.Second}
	fmt.Printf("select-only, prepared, -c 4 -j 2, %s runs after a %s warm-up, direct and TLS (require) interleaved, "+
		"PostgreSQL on 127.0.0.1; %d benchmarks per repetition count\n\n", duration, warmup, benchmarks)
	fmt.Println("| repetitions | transport | median tps of each benchmark | CV of the medians | runs' CV (median) |")
	fmt.Println("|---|---|---|---|---|")
	worst, worstRatio := 0.0, 0.0
	for _, reps := range []int{3, 5} {
		medians := map[string][]float64{}
		runCVs := map[string][]float64{}
		var ratios []float64
		for range benchmarks {
			tps := map[string][]float64{}
			for range reps {
				for _, t := range transports {
					rep, err := b.Run(runnerbin.Env(b.Server.Env(t.sslmode)),
						runspec.Run{Load: load, Warmup: warmup, Tunnels: 1, WaitTimeout: time.Minute})
					if err != nil {
						return fmt.Errorf("%s: %w", t.name, err)
					}
					tps[t.name] = append(tps[t.name], rep.Result.TPS)
				}
			}
			for _, t := range transports {
				s := stats.Summarize(tps[t.name])
				medians[t.name] = append(medians[t.name], s.Median)
				runCVs[t.name] = append(runCVs[t.name], s.CV)
			}
			// The answer a benchmark gives: the paired ratio over its rounds, as status reports it.
			r, err := stats.PairedRatio(tps[transports[0].name], tps[transports[1].name])
			if err != nil {
				return err
			}
			ratios = append(ratios, r.Estimate)
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
		s := stats.Summarize(ratios)
		worstRatio = max(worstRatio, s.CV)
		var cells []string
		for _, r := range ratios {
			cells = append(cells, fmt.Sprintf("%.3f", r))
		}
		fmt.Printf("| %d | %s/%s, paired | %s | %.1f %% | |\n", reps, transports[1].name, transports[0].name, strings.Join(cells, ", "), 100*s.CV)
	}
	verdict := "meets"
	if worst > target {
		verdict = "ABOVE"
	}
	fmt.Printf("\nlargest CV of the reported median: %.1f %% (%s the target %.0f %%)\n", 100*worst, verdict, 100*target)
	verdict = "meets"
	if worstRatio > target {
		verdict = "ABOVE"
	}
	fmt.Printf("largest CV of the reported ratio: %.1f %% (%s the target %.0f %%)\n", 100*worstRatio, verdict, 100*target)
	return nil
}
