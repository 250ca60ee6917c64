// Command ssh measures the ssh transport on this machine against a local PostgreSQL: tps of each
// cipher, compression on and off, and 1, 2 and 4 tunnels, as a ratio to direct and to TLS, run
// interleaved; each through the sidecars' tunnels and the runner (our design) and through a
// hand-run `ssh -CqTfnN -L` with bare pgbench (the published study's way), whose ratio must be
// ≥ 0.95; and the CPU that ssh and sshd spend per transaction, which is what limits a tunnel.
//
//	go run ./hack/bench/ssh [-rounds 2] [-duration 5s] [-clients 4] [-threads 4]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunnelbench/tunnelbench/hack/bench/runnerbin"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/testing/sshtest"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshtunnel"
)

const target = 0.95

type config struct {
	name        string
	cipher      string
	compression bool
	tunnels     int
}

func main() {
	rounds := flag.Int("rounds", 2, "interleaved rounds")
	duration := flag.Duration("duration", 5*time.Second, "duration of each run")
	clients := flag.Int("clients", 4, "pgbench clients")
	threads := flag.Int("threads", 4, "pgbench threads")
	flag.Parse()
	if err := run(*rounds, *duration, *clients, *threads); err != nil {
		fmt.Fprintln(os.Stderr, "bench ssh:", err)
		os.Exit(1)
	}
}

type bench struct {
	work   string
	runner *runnerbin.Runner
	srv    *pgtest.Server
	gw     *sshtest.Gateway
	// load is the workload of every run: an inline script, which the runner receives in
	// runspec.ScriptEnv and bare pgbench reads from runspec.ScriptPath.
	load runspec.Load
	env  []string
}

// script is the workload: the cheapest round trip, so that the transport is what is measured.
const script = "select 1;\n"

func run(rounds int, duration time.Duration, clients, threads int) error {
	b := &bench{}
	var err error
	if b.work, err = os.MkdirTemp("", "tunnelbench-sshbench-"); err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(b.work) }()
	if b.runner, err = runnerbin.Build(b.work); err != nil {
		return err
	}
	if b.srv, err = pgtest.StartTemp(pgtest.Options{}); err != nil {
		return err
	}
	defer b.srv.Stop()
	if b.gw, err = sshtest.Start(fmt.Sprintf("%s:%d", b.srv.Host, b.srv.Port)); err != nil {
		return err
	}
	defer b.gw.Stop()
	b.env = os.Environ()
	for k, v := range b.srv.Env("disable") {
		b.env = append(b.env, k+"="+v)
	}
	if out, err := b.command("pgbench", "-i", "-s", "1", "-q").CombinedOutput(); err != nil {
		return fmt.Errorf("pgbench -i: %w: %s", err, out)
	}
	// Bare pgbench reads the script where the runner writes it (the runner rewrites the same text).
	if err := os.MkdirAll(filepath.Dir(runspec.ScriptPath), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(runspec.ScriptPath, []byte(script), 0o644); err != nil {
		return err
	}
	b.load = runspec.Load{Script: true, Protocol: "prepared", Clients: clients, Threads: threads, Duration: duration}

	configs := []config{{"chacha20 (default)", "chacha20-poly1305@openssh.com", false, 1}}
	for _, c := range sshtunnel.Ciphers[1:] {
		configs = append(configs, config{c, c, false, 1})
	}
	configs = append(configs,
		config{"chacha20, compressed", "chacha20-poly1305@openssh.com", true, 1},
		config{"chacha20, 2 tunnels", "chacha20-poly1305@openssh.com", false, 2},
		config{"chacha20, 4 tunnels", "chacha20-poly1305@openssh.com", false, 4})

	fmt.Printf("select 1, prepared, -c %d -j %d, %s per run, %d interleaved rounds, PostgreSQL and sshd on 127.0.0.1\n\n",
		clients, threads, duration, rounds)
	type sample struct{ ours, hand, cpuPerTx []float64 }
	samples := map[string]*sample{}
	var direct, tls []float64
	for r := 0; r < rounds; r++ {
		d, err := b.bare(b.srv.Env("disable"))
		if err != nil {
			return err
		}
		tl, err := b.bare(b.srv.Env("require"))
		if err != nil {
			return err
		}
		direct, tls = append(direct, d), append(tls, tl)
		for _, c := range configs {
			s := samples[c.name]
			if s == nil {
				s = &sample{}
				samples[c.name] = s
			}
			// Alternate which goes first, so that drift hits both alike.
			order := []bool{true, false}
			if r%2 == 1 {
				order = []bool{false, true}
			}
			for _, ours := range order {
				tps, cpu, err := b.tunnelled(c, ours)
				if err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
				if ours {
					s.ours, s.cpuPerTx = append(s.ours, tps), append(s.cpuPerTx, cpu)
				} else {
					s.hand = append(s.hand, tps)
				}
			}
		}
	}
	md, mt := stats.Median(direct), stats.Median(tls)
	fmt.Printf("direct: %.0f tps; TLS (require): %.0f tps (%.2f of direct)\n\n", md, mt, mt/md)
	fmt.Println("| ssh | tps (ours) | vs direct | vs TLS | ssh+sshd CPU µs/tx | tps (hand-run ssh -L) | ours / hand-run |")
	fmt.Println("|---|---|---|---|---|---|---|")
	worst := 10.0
	for _, c := range configs {
		s := samples[c.name]
		o, h := stats.Median(s.ours), stats.Median(s.hand)
		worst = min(worst, o/h)
		fmt.Printf("| %s | %.0f | %.2f | %.2f | %.0f | %.0f | %.3f |\n", c.name, o, o/md, o/mt, stats.Median(s.cpuPerTx), h, o/h)
	}
	verdict := "meets"
	if worst < target {
		verdict = "BELOW"
	}
	fmt.Printf("\nworst ours/hand-run ratio %.3f (%s the target %.2f)\n", worst, verdict, target)
	return nil
}

func (b *bench) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = b.env
	return cmd
}

// bare runs pgbench straight at the server.
func (b *bench) bare(env map[string]string) (float64, error) {
	cmd := exec.Command("pgbench", pgbench.LoadArgs(b.load)...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%w: %s", err, out)
	}
	res, err := pgbench.Parse(bytes.NewReader(out))
	if err != nil {
		return 0, err
	}
	return res.TPS, nil
}

// tunnelled measures one configuration: ours (the sidecars' ssh arguments, the runner splitting
// and aggregating) or by hand (ssh -CqTfnN -L, bare pgbench processes, tps summed). It returns tps
// and, for ours, the CPU ssh and sshd spent per transaction.
func (b *bench) tunnelled(c config, ours bool) (float64, float64, error) {
	base, err := loopback.FreeRange(c.tunnels)
	if err != nil {
		return 0, 0, err
	}
	var ssh []*exec.Cmd
	defer func() {
		for _, s := range ssh {
			_ = s.Process.Kill()
			_ = s.Wait()
		}
	}()
	for i := 0; i < c.tunnels; i++ {
		tn := b.gw.Tunnel(fmt.Sprintf("%s:%d", b.srv.Host, b.srv.Port), base+i)
		var args []string
		if ours {
			tn.Cipher, tn.Compression = c.cipher, c.compression
			tn.LogFile = runspec.TunnelLogFile(b.work, i)
			args = tn.SSHArgs()
		} else {
			flags := "-qTnN"
			if c.compression {
				flags = "-CqTnN"
			}
			args = []string{flags, "-c", c.cipher, "-p", strconv.Itoa(b.gw.Port), "-i", b.gw.IdentityFile,
				"-o", "UserKnownHostsFile=" + b.gw.KnownHostsFile, "-o", "StrictHostKeyChecking=yes",
				"-L", fmt.Sprintf("127.0.0.1:%d:%s:%d", base+i, b.srv.Host, b.srv.Port), b.gw.User + "@127.0.0.1"}
		}
		cmd := exec.Command("ssh", args...)
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		ssh = append(ssh, cmd)
	}
	for i := 0; i < c.tunnels; i++ {
		if err := waitPort(base + i); err != nil {
			return 0, 0, err
		}
	}
	env := append(append([]string{}, b.env...), "PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(base))
	if !ours {
		tps, err := b.handRun(env, base, c.tunnels)
		return tps, 0, err
	}
	cpuBefore := b.tunnelCPU(ssh)
	spec := runspec.Run{Load: b.load, Tunnels: c.tunnels, TunnelPort: base, SSHLogDir: b.work, WaitTimeout: time.Minute}
	rep, err := b.runner.Run(append(env, runspec.ScriptEnv+"="+script), spec)
	if err != nil {
		return 0, 0, err
	}
	cpu := b.tunnelCPU(ssh) - cpuBefore
	return rep.Result.TPS, cpu.Seconds() * 1e6 / float64(rep.Result.Transactions), nil
}

// handRun starts one bare pgbench per tunnel at once, splitting clients and threads like the
// study's 8 × -c 2 (the runner's split), and sums their tps.
func (b *bench) handRun(env []string, base, n int) (float64, error) {
	loads := engine.SplitLoad(b.load, n)
	tps := make([]float64, len(loads))
	errs := make([]error, len(loads))
	var wg sync.WaitGroup
	for i, load := range loads {
		args := pgbench.LoadArgs(load)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("pgbench", args...)
			cmd.Env = append(append([]string{}, env...), "PGPORT="+strconv.Itoa(base+i))
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("%w: %s", err, out)
				return
			}
			res, err := pgbench.Parse(bytes.NewReader(out))
			if err != nil {
				errs[i] = err
				return
			}
			tps[i] = res.TPS
		}()
	}
	wg.Wait()
	var sum float64
	for i := range tps {
		if errs[i] != nil {
			return 0, errs[i]
		}
		sum += tps[i]
	}
	return sum, nil
}

// tunnelCPU is the CPU time the ssh clients and the gateway's sshd sessions (the children of the
// listening sshd) have used so far.
func (b *bench) tunnelCPU(ssh []*exec.Cmd) time.Duration {
	var total time.Duration
	for _, s := range ssh {
		total += processCPU(s.Process.Pid)
	}
	for _, pid := range children(b.gw.PID()) {
		total += processCPU(pid)
	}
	return total
}

// processCPU reads a process's user and system time from /proc (clock ticks of 10 ms).
func processCPU(pid int) time.Duration {
	f := statFields(pid)
	if len(f) < 15 {
		return 0
	}
	utime, _ := strconv.Atoi(f[13])
	stime, _ := strconv.Atoi(f[14])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	// The command name may hold spaces: fields start after its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return append([]string{"pid", "comm"}, strings.Fields(s[i+1:])...)
}

func children(parent int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) > 3 && f[3] == strconv.Itoa(parent) {
			out = append(out, pid)
		}
	}
	return out
}

func waitPort(port int) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			_ = c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("tunnel on port %d did not come up", port)
}
