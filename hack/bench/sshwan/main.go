// Command sshwan measures an SSH tunnel across an emulated WAN against the closed-loop RTT bound
// (clients ÷ RTT): pgbench `select 1` through the link alone, through `ssh -N -L` (no session, as
// the tunnels ran before) and through `ssh -L` with a session (as they run now), each across the
// same userspace link to a local PostgreSQL and sshd, interleaved rounds.
//
// It shows why a tunnel without a session reaches only about 60 % of the bound: sshd sets
// TCP_NODELAY on its connection when it starts a session (ssh_packet_set_interactive), never for
// forwarding alone, so Nagle's algorithm holds each reply of sshd behind the ACK of the one before
// — a round trip on a WAN. `strace -f -e setsockopt` of sshd shows it: without a session it sets
// TCP_NODELAY only on the sockets it forwards to, never on the client's. A hand-run `ssh -N -L`
// meets the same limit; the setting a user changes is to run a command that waits instead of -N
// (`ssh -L ... host 'exec tail -f --pid=$PPID /dev/null'`, which also ends with the connection).
//
//	go run ./hack/bench/sshwan [-rounds 3] [-rtt 20ms] [-clients 4]
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/testing/sshtest"
	"github.com/tunnelbench/tunnelbench/internal/transport/link"
)

// target is what the tunnel must reach, as a share of the closed-loop bound.
const target = 0.9

func main() {
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	rtt := flag.Duration("rtt", 20*time.Millisecond, "the emulated link's round-trip time")
	clients := flag.Int("clients", 4, "pgbench clients")
	flag.Parse()
	if err := run(*rounds, *rtt, *clients); err != nil {
		fmt.Fprintln(os.Stderr, "sshwan:", err)
		os.Exit(1)
	}
}

func run(rounds int, rtt time.Duration, clients int) error {
	srv, err := pgtest.StartTemp(pgtest.Options{})
	if err != nil {
		return err
	}
	defer srv.Stop()
	pg := net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	gw, err := sshtest.Start(pg)
	if err != nil {
		return err
	}
	defer gw.Stop()
	direct, err := link.Start("127.0.0.1:0", pg, link.Link{RTT: rtt})
	if err != nil {
		return err
	}
	defer direct.Stop()
	toGateway, err := link.Start("127.0.0.1:0", "127.0.0.1:"+strconv.Itoa(gw.Port), link.Link{RTT: rtt})
	if err != nil {
		return err
	}
	defer toGateway.Stop()
	ports := map[string]string{"link": portOf(direct.Addr())}
	for _, mode := range []string{"ssh -N", "ssh with a session"} {
		port, stop, err := tunnel(gw, pg, toGateway.Addr(), mode == "ssh -N")
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		defer stop()
		ports[mode] = port
	}
	return measure(srv, ports, rounds, rtt, clients)
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// tunnel runs the tunnel's ssh to the gateway through the link, with -N or with a session, and
// returns its local port once it accepts connections.
func tunnel(gw *sshtest.Gateway, pg, via string, noSession bool) (string, func(), error) {
	local, err := loopback.FreePort()
	if err != nil {
		return "", nil, err
	}
	tn := gw.Tunnel(pg, local)
	tn.Port, _ = strconv.Atoi(portOf(via))
	tn.HostKeyAlias = "[127.0.0.1]:" + strconv.Itoa(gw.Port)
	tn.LogFile = filepath.Join(os.TempDir(), fmt.Sprintf("sshwan-%d.log", local))
	args := tn.SSHArgs()
	if noSession {
		args = append([]string{"-N"}, args...)
	}
	cmd := exec.Command("ssh", args...)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = os.Remove(tn.LogFile) }
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(local)); err == nil {
			_ = c.Close()
			return strconv.Itoa(local), stop, nil
		}
	}
	log, _ := os.ReadFile(tn.LogFile)
	stop()
	return "", nil, fmt.Errorf("the tunnel did not come up:\n%s", log)
}

// measure runs pgbench select 1 through each path, interleaved, and prints the medians against the
// bound.
func measure(srv *pgtest.Server, ports map[string]string, rounds int, rtt time.Duration, clients int) error {
	script := filepath.Join(os.TempDir(), "sshwan-select1.sql")
	if err := os.WriteFile(script, []byte("select 1;\n"), 0o644); err != nil {
		return err
	}
	defer func() { _ = os.Remove(script) }()
	env := os.Environ()
	for k, v := range srv.Env("disable") {
		env = append(env, k+"="+v)
	}
	args := []string{"-n", "-f", script, "-M", "simple", "-c", strconv.Itoa(clients), "-j", "2", "-T", "5"}
	paths := []string{"link", "ssh -N", "ssh with a session"}
	tps := map[string][]float64{}
	for range rounds {
		for _, p := range paths {
			cmd := exec.Command("pgbench", args...)
			cmd.Env = append(slices.Clone(env), "PGHOST=127.0.0.1", "PGPORT="+ports[p])
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %w: %s", p, err, out)
			}
			res, err := pgbench.Parse(strings.NewReader(string(out)))
			if err != nil {
				return err
			}
			tps[p] = append(tps[p], res.TPS)
		}
	}
	bound := float64(clients) / rtt.Seconds()
	fmt.Printf("pgbench %s, select 1, %d interleaved rounds, across a %s link; the closed-loop bound is %d clients / %s = %.0f tps\n\n",
		strings.Join(args[3:], " "), rounds, rtt, clients, rtt, bound)
	fmt.Println("| path | median tps | of the bound | rounds |\n|---|---|---|---|")
	for _, p := range paths {
		m := stats.Median(tps[p])
		fmt.Printf("| %s | %.0f | %.2f | %v |\n", p, m, m/bound, rounded(tps[p]))
	}
	got := stats.Median(tps["ssh with a session"]) / bound
	fmt.Printf("\nthe tunnel as it runs: %.2f of the bound (target ≥ %.2f: %v)\n", got, target, got >= target)
	return nil
}

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x + 0.5)
	}
	return out
}
