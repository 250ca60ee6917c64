// Command measuring measures what measuring a run's cost costs it: the same pgbench load through
// the runner binary, with its cost measurements on (its container's cgroup and its pod's
// interface counters read at the window's ends, and four parts sampled over HTTP: three on
// loopback as sidecars serve them, one as a remote part is asked, each served by a real
// `tunnelbench-runner sidecar` wrapping an idle command) and off (nothing to read, no parts),
// interleaved A B B A so that drift hits both alike; it prints the paired ratio of their tps with
// its 95 % interval and says whether the target, measuring costs at most 1 % of tps, is met, missed,
// or beyond what the rounds can tell.
//
//	go run ./hack/bench/measuring [-rounds 6] [-duration 10s] [-clients 4] [-threads 2]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/tunnelbench/tunnelbench/hack/bench/runnerbin"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
)

// target is the lowest acceptable tps ratio of measured to unmeasured runs.
const target = 0.99

func main() {
	rounds := flag.Int("rounds", 6, "runs of each kind")
	duration := flag.Duration("duration", 10*time.Second, "duration of each run")
	clients := flag.Int("clients", 4, "pgbench clients")
	threads := flag.Int("threads", 2, "pgbench threads")
	flag.Parse()
	if err := run(*rounds, *duration, *clients, *threads); err != nil {
		fmt.Fprintln(os.Stderr, "measuring:", err)
		os.Exit(1)
	}
}

func run(rounds int, duration time.Duration, clients, threads int) error {
	b, err := runnerbin.Start("measuring")
	if err != nil {
		return err
	}
	defer b.Stop()
	parts, stop, err := startParts(b.Bin)
	if err != nil {
		return err
	}
	defer stop()
	env := runnerbin.Env(b.Server.Env("disable"))
	load := runspec.Load{Builtin: "select-only", Protocol: "prepared", Clients: clients, Threads: threads,
		Duration: duration, ProgressInterval: 5 * time.Second}
	tps := func(rep *report.Report, err error) (float64, error) {
		if err != nil {
			return 0, err
		}
		return rep.Result.TPS, nil
	}
	fmt.Printf("pgbench select-only, prepared, %d clients, %s × %d rounds of each kind, on 127.0.0.1\n\n", clients, duration, rounds)
	off, on, err := runnerbin.Interleave(rounds,
		runnerbin.Kind{Name: "off", Run: func() (float64, error) {
			return tps(b.RunWith(env, runspec.Run{Load: load, Tunnels: 1, WaitTimeout: time.Minute}, "--cgroup=/nonexistent",
				"--netdev=/nonexistent"))
		}},
		runnerbin.Kind{Name: "on", Run: func() (float64, error) {
			rep, err := b.RunWith(env, runspec.Run{Load: load, Tunnels: 1, WaitTimeout: time.Minute, CPUParts: parts})
			if err == nil && (rep.CPU == nil || rep.Wire == nil || len(rep.Sidecars) != len(parts)) {
				err = fmt.Errorf("the run did not measure: CPU %v, wire %v, parts %d of %d (%+v)", rep.CPU, rep.Wire,
					len(rep.Sidecars), len(parts), rep.Unmeasured)
			}
			return tps(rep, err)
		}})
	if err != nil {
		return err
	}
	r, err := stats.PairedRatio(off, on)
	if err != nil {
		return err
	}
	fmt.Printf("\nmedian tps: off %.0f, on %.0f; paired ratio on/off %.3f, 95 %% interval [%.3f, %.3f]\n",
		stats.Median(off), stats.Median(on), r.Estimate, r.Low, r.High)
	switch {
	case r.High < target:
		return fmt.Errorf("measuring costs more than %.0f %% of tps: the whole interval is below %.2f", 100*(1-target), target)
	case r.Low >= target:
		fmt.Printf("meets the target: measuring costs at most %.0f %% of tps (the whole interval is at or above %.2f)\n",
			100*(1-target), target)
	default:
		fmt.Printf("within the noise: the interval holds ratios on both sides of %.2f; these rounds cannot tell a cost of "+
			"%.0f %% (more rounds narrow it)\n", target, 100*(1-target))
	}
	return nil
}

// startParts starts four idle commands under `tunnelbench-runner sidecar`, each serving its
// cgroup's accounting on a loopback port, and names them as a run's parts: three sidecars and
// one asked as a remote part is (by host).
func startParts(bin string) ([]runspec.CPUPart, func(), error) {
	var parts []runspec.CPUPart
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for i, name := range []string{"tunnel-0", "tunnel-1", "link", "server"} {
		port, err := loopback.FreePort()
		if err != nil {
			stop()
			return nil, nil, err
		}
		cmd := exec.Command(bin, "sidecar", "--cpu-port="+strconv.Itoa(port), "--", "sleep", "86400")
		if err := cmd.Start(); err != nil {
			stop()
			return nil, nil, err
		}
		cmds = append(cmds, cmd)
		p := runspec.CPUPart{Name: name, Port: port}
		if i == 3 {
			p.Host = "127.0.0.1"
		}
		parts = append(parts, p)
	}
	time.Sleep(time.Second) // their servers listen before the first run asks
	return parts, stop, nil
}
