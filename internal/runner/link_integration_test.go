package runner

import (
	"math"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/transport/link"
)

// TestRunMeasuresTheLink runs the runner through the link proxy, as the runner pod does: libpq
// and the preflight dial the proxy's loopback end (PGHOSTADDR) while TLS verify-full still checks
// the server's name, and the runner measures the link before the load.
func TestRunMeasuresTheLink(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	s := startServer(t, pgtest.Options{})
	setEnv(t, s.Env("disable"))
	if _, out, err := runOnce(t, Options{Run: runspec.Run{Init: true, Scale: 1, Tunnels: 1}}); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	asked := runspec.Link{RTT: 10 * time.Millisecond, BitsPerSecond: 20_000_000}
	p, err := link.Start("127.0.0.1:0", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)),
		link.Link{RTT: asked.RTT, BitsPerSecond: asked.BitsPerSecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	_, port, _ := net.SplitHostPort(p.Addr())
	env := s.Env("verify-full")
	env["PGHOST"], env["PGHOSTADDR"], env["PGPORT"] = "localhost", "127.0.0.1", port
	setEnv(t, env)

	run := runspec.Run{Load: runspec.Load{Builtin: "select-only", Protocol: "simple", Clients: 2, Threads: 1,
		Duration: 2 * time.Second}, Tunnels: 1, Link: asked}
	rep, out, err := runOnce(t, Options{Run: run})
	if err != nil {
		t.Fatalf("run through the link: %v\n%s", err, out)
	}
	if rep.TLS == nil {
		t.Fatalf("verify-full through the proxy negotiated no TLS: %+v", rep)
	}
	l := rep.Link
	if l == nil {
		t.Fatalf("no link measured:\n%s", out)
	}
	checkMeasuredLink(t, l, asked)
	// pgbench crossed the link too: 2 clients on a 10 ms link cannot exceed 200 tps.
	if rep.Result.TPS > 200 {
		t.Errorf("%.0f tps through a 10 ms link with 2 clients: pgbench did not take the link", rep.Result.TPS)
	}
}

// checkMeasuredLink checks a measure of a 10 ms link against it: the smallest statement's RTT is
// the link's and the server's microseconds, within the emulator's ±1 ms and a loaded machine's
// scheduling; a TLS login (the TCP and TLS handshakes, the login's exchange) takes at least three
// round trips; the random data's rate is the asked bandwidth's within 15 %.
func checkMeasuredLink(t *testing.T, l *report.Link, asked runspec.Link) {
	t.Helper()
	if math.Abs(l.RTTMs-10) > 2 {
		t.Errorf("measured RTT %.3f ms, asked 10 ms", l.RTTMs)
	}
	if l.ConnectMs < 30 {
		t.Errorf("connection time %.3f ms through a 10 ms link: the handshakes cannot be that fast", l.ConnectMs)
	}
	if ratio := float64(l.BitsPerSecond) / float64(asked.BitsPerSecond); ratio < 0.85 || ratio > 1.15 {
		t.Errorf("measured %d bit/s, asked %d (ratio %.2f)", l.BitsPerSecond, asked.BitsPerSecond, ratio)
	}
}

func TestCopyBytes(t *testing.T) {
	tests := []struct{ bps, want int64 }{
		{100_000, minCopyBytes},
		{20_000_000, 5_000_000},
		{10_000_000_000, maxCopyBytes},
	}
	for _, tt := range tests {
		if got := copyBytes(tt.bps); got != tt.want {
			t.Errorf("copyBytes(%d) = %d, want %d", tt.bps, got, tt.want)
		}
	}
}
