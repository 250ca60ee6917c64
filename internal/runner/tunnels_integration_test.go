package runner

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/testing/sshtest"
)

// startTunnels runs n real ssh tunnels through a real sshd to the server, on consecutive loopback
// ports, logging as the sidecars do (runspec.TunnelLogFile in logDir).
func startTunnels(t *testing.T, s *pgtest.Server, n int, cipher string) (basePort int, logDir string, ssh []*exec.Cmd) {
	t.Helper()
	gw, err := sshtest.Start(fmt.Sprintf("%s:%d", s.Host, s.Port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Stop)
	logDir = t.TempDir()
	basePort, err = loopback.FreeRange(n)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		tn := gw.Tunnel(fmt.Sprintf("%s:%d", s.Host, s.Port), basePort+i)
		tn.Cipher = cipher
		tn.LogFile = runspec.TunnelLogFile(logDir, i)
		cmd := exec.Command("ssh", tn.SSHArgs()...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		ssh = append(ssh, cmd)
	}
	for i := 0; i < n; i++ {
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(basePort+i))
			if err == nil {
				_ = c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tunnel %d did not come up", i)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return basePort, logDir, ssh
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func TestRunThroughSSHTunnels(t *testing.T) {
	pgtest.SkipIfShort(t)
	sshtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{})
	setEnv(t, s.Env("disable"))
	if _, out, err := runOnce(t, Options{Run: runspec.Run{Init: true, Scale: 1, Tunnels: 1}}); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	tests := []struct {
		tunnels    int
		cipher     string
		wantCipher string
	}{
		{1, "", "chacha20-poly1305@openssh.com"},
		{4, "aes128-gcm@openssh.com", "aes128-gcm@openssh.com"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d tunnels", tt.tunnels), func(t *testing.T) {
			base, logDir, _ := startTunnels(t, s, tt.tunnels, tt.cipher)
			t.Setenv("PGHOST", "127.0.0.1")
			t.Setenv("PGPORT", strconv.Itoa(base))
			rep, out, err := runOnce(t, Options{Run: runspec.Run{Tunnels: tt.tunnels, TunnelPort: base, SSHLogDir: logDir,
				Load: runspec.Load{Builtin: "select-only", Protocol: "prepared", Clients: 4, Threads: 4,
					Duration: 3 * time.Second, ProgressInterval: time.Second}}})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			res := rep.Result
			if res.TPS <= 0 || res.Clients != 4 || res.Threads != 4 {
				t.Fatalf("aggregate %+v", res)
			}
			if rep.SSH == nil || rep.SSH.Cipher != tt.wantCipher {
				t.Fatalf("negotiated %+v, want cipher %s", rep.SSH, tt.wantCipher)
			}
			if !strings.HasPrefix(rep.SSH.ClientVersion, "OpenSSH_") || !strings.HasPrefix(rep.SSH.ServerVersion, "OpenSSH_") {
				t.Errorf("ssh versions: client %q, server %q", rep.SSH.ClientVersion, rep.SSH.ServerVersion)
			}
			// Every tunnel's transactions are in the one histogram, and their progress adds up.
			assertLatency(t, rep)
			if len(res.Progress) < 2 {
				t.Errorf("progress of the %d tunnels: %+v", tt.tunnels, res.Progress)
			}
			if tt.tunnels == 1 {
				if len(rep.Tunnels) != 0 {
					t.Errorf("one tunnel needs no per-tunnel figures: %+v", rep.Tunnels)
				}
				return
			}
			// One process a tunnel, each recorded as it started: its port and its share of clients.
			last := fmt.Sprintf("PGPORT=%d pgbench ", base+tt.tunnels-1)
			if procs := strings.Split(rep.Executed, "; "); len(procs) != tt.tunnels || !strings.HasPrefix(procs[tt.tunnels-1], last) ||
				!strings.Contains(procs[tt.tunnels-1], "-c 1 -j 1") || !strings.Contains(procs[tt.tunnels-1], " -l --log-prefix=") {
				t.Errorf("executed %q, want %d processes, the last on port %d with 1 client", rep.Executed, tt.tunnels, base+tt.tunnels-1)
			}
			// The aggregate is computed from the per-process figures: check it against them.
			if len(rep.Tunnels) != tt.tunnels {
				t.Fatalf("%d per-tunnel results, want %d", len(rep.Tunnels), tt.tunnels)
			}
			var tps, lat float64
			var tx int64
			for _, p := range rep.Tunnels {
				if p.TPS <= 0 || !strings.Contains(out, fmt.Sprintf("[tunnel %d] tps = ", p.Index)) {
					t.Errorf("tunnel %d: %+v", p.Index, p)
				}
				tps += p.TPS
				tx += p.Transactions
				lat += p.LatencyAvgMs * float64(p.Transactions)
			}
			if math.Abs(tps-res.TPS) > 1e-6 || tx != res.Transactions || math.Abs(lat/float64(tx)-res.LatencyAvgMs) > 1e-9 {
				t.Errorf("aggregate %+v does not match the tunnels %+v", res, rep.Tunnels)
			}
		})
	}
}

// TestDeadTunnelFailsTheRun: a tunnel killed mid-run fails the transport with TunnelDown, naming
// the tunnel and ssh's last words, instead of a quietly lower tps.
func TestDeadTunnelFailsTheRun(t *testing.T) {
	pgtest.SkipIfShort(t)
	sshtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{})
	setEnv(t, s.Env("disable"))
	if _, out, err := runOnce(t, Options{Run: runspec.Run{Init: true, Scale: 1, Tunnels: 1}}); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	base, logDir, ssh := startTunnels(t, s, 2, "")
	t.Setenv("PGHOST", "127.0.0.1")
	t.Setenv("PGPORT", strconv.Itoa(base))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
			_ = ssh[1].Process.Signal(syscall.SIGTERM)
		}
	}()
	rep, out, err := runOnce(t, Options{Run: runspec.Run{Tunnels: 2, TunnelPort: base, SSHLogDir: logDir,
		Load: runspec.Load{Builtin: "select-only", Clients: 2, Threads: 2, Duration: 6 * time.Second}}})
	if err == nil {
		t.Fatalf("the run succeeded although a tunnel died:\n%s", out)
	}
	// ssh's last words: its byte counts as its session ends, or, a session's ssh may log it last,
	// the signal that stopped it.
	if rep.Failure.Reason != conditions.ReasonTunnelDown || !strings.Contains(rep.Failure.Message, "tunnel 1 of 2") ||
		!strings.Contains(rep.Failure.Message, "the ssh session ended") && !strings.Contains(rep.Failure.Message, "Killed by signal 15") {
		b, _ := os.ReadFile(runspec.TunnelLogFile(logDir, 1))
		t.Errorf("failure %s: %s\ntunnel-1.log tail: %s", rep.Failure.Reason, rep.Failure.Message, tail(string(b), 8))
	}
}
