//go:build e2e

package e2e

import (
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

// wanRTT is the emulated link of the WAN seeds: at 10 ms, 4 clients running one round trip per
// transaction are bound to 4 / 10 ms = 400 tps.
const (
	wanRTT     = 10 * time.Millisecond
	wanClients = 4
)

// wanBenchmark runs `select 1` through transports across an emulated 10 ms, 50 Mbit/s link.
func wanBenchmark(t *testing.T, ns, name string, pg *fixture.Postgres, reconnect bool,
	transports ...benchv1.TransportSpec) *benchv1.TunnelBenchmark {
	t.Helper()
	tb := benchmark(ns, name, pg, fixture.CredentialsSecret)
	tb.Spec.Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: wanRTT}, Bandwidth: "50Mbit"}
	tb.Spec.Transports = transports
	tb.Spec.Load.Builtin, tb.Spec.Load.Script, tb.Spec.Load.Protocol = "", "select 1;", benchv1.Protocol("simple")
	tb.Spec.Load.Clients, tb.Spec.Load.Threads, tb.Spec.Load.Reconnect = wanClients, 2, reconnect
	end := complete(t, tb, 6*time.Minute)
	for _, r := range end.Status.Results {
		t.Logf("%s: %.0f tps, %.3f ms, link %+v measured %+v", r.Transport, r.TPS, r.LatencyAvgMs, ptrVal(r.Link),
			ptrVal(linkMeasured(r.Link)))
	}
	return end
}

func linkMeasured(l *benchv1.LinkResult) *benchv1.MeasuredLink {
	if l == nil {
		return nil
	}
	return l.Measured
}

// emulatedWAN reproduces the seeds of a WAN path with the userspace emulator: a path bound by its
// RTT, a LAN transport next to WAN ones in one benchmark, the link measured as asked, and the
// collapse of short connections that a client-side pooler recovers.
func emulatedWAN(t *testing.T, ns string, pg *fixture.Postgres) {
	bound := float64(wanClients) / wanRTT.Seconds()
	long := wanBenchmark(t, ns, "wan", pg, false,
		benchv1.TransportSpec{Name: "lan", Type: benchv1.TransportDirect, Network: &benchv1.NetworkSpec{}},
		benchv1.TransportSpec{Name: "wan", Type: benchv1.TransportDirect},
		benchv1.TransportSpec{Name: "wan-tls", Type: benchv1.TransportTLS},
		benchv1.TransportSpec{Name: "wan-ssh", Type: benchv1.TransportSSH},
	)
	lan := long.Status.Result("lan")
	if lan == nil || lan.Link != nil || lan.TPS < 2*bound {
		t.Errorf("the LAN transport: %+v; want no link and well above the WAN's bound of %.0f tps", lan, bound)
	}
	for _, name := range []string{"wan", "wan-tls", "wan-ssh"} {
		r := long.Status.Result(name)
		if r == nil {
			t.Fatalf("no result for %s", name)
		}
		// Long connections, one round trip per transaction: 50–105 % of the physical bound.
		if r.TPS < 0.5*bound || r.TPS > 1.05*bound {
			t.Errorf("%s: %.0f tps, want 50–105 %% of clients / RTT = %.0f", name, r.TPS, bound)
		}
		l := r.Link
		if l == nil || l.Measured == nil || l.Emulator != benchv1.EmulatorUserspace || l.Asked.RTTMs != 10 {
			t.Fatalf("%s: link %+v", name, l)
		}
		if math.Abs(l.Measured.RTTMs-10) > 2 {
			t.Errorf("%s: measured RTT %.3f ms for 10 ms", name, l.Measured.RTTMs)
		}
		if ratio := float64(l.Measured.BitsPerSecond) / 50e6; ratio < 0.85 || ratio > 1.15 {
			t.Errorf("%s: measured %d bit/s for 50 Mbit/s (%.2f)", name, l.Measured.BitsPerSecond, ratio)
		}
		// A connection crosses the link's handshake and at least the login's round trips.
		if l.Measured.ConnectMs < 2*10 {
			t.Errorf("%s: connecting took %.3f ms across a 10 ms link", name, l.Measured.ConnectMs)
		}
	}
	if r := long.Status.Result("wan-tls"); r.TLS == nil {
		t.Errorf("verify-full through the link negotiated no TLS: %+v", r)
	}
	if r := long.Status.Result("wan-ssh"); r.SSH == nil {
		t.Errorf("the tunnel through the link negotiated nothing: %+v", r)
	}
	if c := findCondition(long, benchv1.ConditionLinkMismatch); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("LinkMismatch condition %+v, want False: every link measured as asked", c)
	}

	short := wanBenchmark(t, ns, "wan-reconnect", pg, true,
		benchv1.TransportSpec{Name: "wan", Type: benchv1.TransportDirect},
		// Transaction pooling: in session mode every client's logout costs a DISCARD ALL and the
		// next login a SET application_name, two round trips across the link (measured: 3.2×).
		benchv1.TransportSpec{Name: "wan-pgbouncer", Type: benchv1.TransportPooler,
			Pooler: &benchv1.PoolerTransport{Placement: benchv1.PoolerSidecar, PoolMode: benchv1.PoolModeTransaction}},
	)
	direct, pooled := short.Status.Result("wan"), short.Status.Result("wan-pgbouncer")
	// A new connection per transaction adds the handshake and the login's round trips: tps
	// collapses below the long connections' figure.
	if longTPS := long.Status.Result("wan").TPS; direct.TPS > longTPS/2 {
		t.Errorf("short connections: %.0f tps, long ones %.0f: no collapse", direct.TPS, longTPS)
	}
	// The sidecar's pooled connections cross the link once; pgbench's reconnect over loopback.
	ratio := pooled.TPS / direct.TPS
	t.Logf("short connections across 10 ms: direct %.0f tps, PgBouncer sidecar %.0f tps (%.1f×)", direct.TPS, pooled.TPS, ratio)
	if ratio < 5 {
		t.Errorf("the PgBouncer sidecar recovers %.1f× over direct with reconnect, want at least 5×", ratio)
	}
}

func findCondition(tb *benchv1.TunnelBenchmark, typ string) *metav1.Condition {
	for i := range tb.Status.Conditions {
		if tb.Status.Conditions[i].Type == typ {
			return &tb.Status.Conditions[i]
		}
	}
	return nil
}
