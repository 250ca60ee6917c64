//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/test/fixture"
	"github.com/tunnelbench/tunnelbench/test/poll"
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
		// Long connections, one round trip per transaction: 50–105 % of the physical bound. The
		// ssh tunnel multiplexes the 4 clients on one connection; it measured 51–58 % while its
		// gateway ran no session (Nagle held sshd's replies for an ACK), and must now keep up
		// with direct: below 70 % would be that again.
		floor := 0.5
		if r.Type == benchv1.TransportSSH {
			floor = 0.7
		}
		if r.TPS < floor*bound || r.TPS > 1.05*bound {
			t.Errorf("%s: %.0f tps, want %.0f–105 %% of clients / RTT = %.0f", name, r.TPS, floor*100, bound)
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
	// Direct across the link runs one round trip per transaction at close to clients / RTT: the
	// network is named the limiter of every run, with the figure.
	for _, run := range long.Status.Result("wan").Runs {
		if run.Limiter == nil || run.Limiter.Part != benchv1.PartNetwork {
			t.Errorf("wan run %d at %.0f tps: limiter %+v, want network", run.Round, run.TPS, run.Limiter)
		}
	}
	// The link counts what it held: one round trip of 10 ms per transaction on each connection of
	// direct and TLS, within 10 % (the connections' logins fall in the counted stretch, not in the
	// transactions); the ssh tunnel's one connection carries four clients' and is counted once.
	for _, name := range []string{"wan", "wan-tls", "wan-ssh"} {
		for _, run := range long.Status.Result(name).Runs {
			if !checkBudgetAddsUp(t, name, run, benchv1.PartClient, "link") {
				continue
			}
			link := budgetPart(run.Budget, "link")
			if name != "wan-ssh" && math.Abs(link.HeldMs-10) > 1 {
				t.Errorf("%s run %d: the link held each transaction %.3f ms, want 10 ms within 10 %%", name, run.Round, link.HeldMs)
			}
			// The link's threads work inside its holds: counted once, the shares fit the round trip.
			if b := run.Budget; b.UnattributedMs < -0.05*b.RoundTripMs {
				t.Errorf("%s run %d: the shares add up to %.3f ms more than the %.3f ms round trip", name, run.Round,
					-b.UnattributedMs, b.RoundTripMs)
			}
		}
	}
	if lan != nil {
		for _, run := range lan.Runs {
			if run.Limiter != nil && run.Limiter.Part == benchv1.PartNetwork {
				t.Errorf("the LAN transport's run %d is called network-limited: %+v", run.Round, run.Limiter)
			}
		}
	}
	if r := long.Status.Result("wan-tls"); r.TLS == nil {
		t.Errorf("verify-full through the link negotiated no TLS: %+v", r)
	}
	if r := long.Status.Result("wan-ssh"); r.SSH == nil {
		t.Errorf("the tunnel through the link negotiated nothing: %+v", r)
	}
	if c := findCondition(long, conditions.LinkMismatch); c == nil || c.Status != metav1.ConditionFalse {
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

// compressionAcrossTheWAN reproduces the compression seed: at 50 Mbit/s a compressed ssh tunnel
// moves repetitive text at least twice as fast as an uncompressed one, and gains nothing on
// random data.
func compressionAcrossTheWAN(t *testing.T, ns string, pg *fixture.Postgres) {
	ratios := map[benchv1.CopyData]float64{}
	for _, data := range []benchv1.CopyData{benchv1.CopyText, benchv1.CopyRandom} {
		tb := benchmark(ns, "wan-copy-"+string(data), pg, fixture.CredentialsSecret)
		tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "50Mbit"}
		tb.Spec.Load = benchv1.LoadSpec{Initialize: true, Repetitions: 1,
			Copy: &benchv1.CopyLoad{Size: resource.MustParse("16Mi"), Data: data}}
		tb.Spec.Transports = []benchv1.TransportSpec{
			{Name: "ssh", Type: benchv1.TransportSSH},
			{Name: "ssh-compressed", Type: benchv1.TransportSSH, SSH: &benchv1.SSHTransport{Compression: true}},
		}
		end := complete(t, tb, 6*time.Minute)
		for _, r := range end.Status.Results {
			c := r.Copy
			if c == nil || c.Data != data || c.Bytes < 16<<20 || c.Rows != 16<<10 || c.MBPerSecond <= 0 || r.TPS != 0 {
				t.Fatalf("%s/%s: copy %+v, tps %v", data, r.Transport, c, r.TPS)
			}
			t.Logf("%s through %s: %.2f MB/s, %.0f rows/s, %d bytes; link %+v", data, r.Transport, c.MBPerSecond,
				c.RowsPerSecond, c.Bytes, ptrVal(linkMeasured(r.Link)))
		}
		plain, compressed := end.Status.Result("ssh").Copy, end.Status.Result("ssh-compressed").Copy
		// What crossed the runner pod's interfaces per row: uncompressed, the row's kilobyte and
		// the protocol's framing; compressed, a fraction of it on text and as much on random data.
		plainWire, compressedWire := wirePerRow(t, end, "ssh"), wirePerRow(t, end, "ssh-compressed")
		t.Logf("%s on the wire: %.0f bytes per row uncompressed, %.0f compressed", data, plainWire, compressedWire)
		if plainWire < runspec.CopyRowBytes || plainWire > 1.3*runspec.CopyRowBytes {
			t.Errorf("%s: %.0f bytes per row of %d through an uncompressed tunnel", data, plainWire, runspec.CopyRowBytes)
		}
		switch share := compressedWire / plainWire; {
		case data == benchv1.CopyText && share > 0.5:
			t.Errorf("compressed text crossed as %.0f%% of the uncompressed bytes per row, want at most half", 100*share)
		case data == benchv1.CopyRandom && share < 0.9:
			t.Errorf("compressed random data crossed as %.0f%% of the uncompressed bytes per row", 100*share)
		}
		// Uncompressed, the copy is bound by the link: 50 Mbit/s is 6.25 MB/s.
		if plain.MBPerSecond > 6.25*1.15 {
			t.Errorf("%s: %.2f MB/s through an uncompressed tunnel on a 50 Mbit/s link", data, plain.MBPerSecond)
		}
		ratios[data] = compressed.MBPerSecond / plain.MBPerSecond
		if b := end.Status.Best; b == nil || b.MBPerSecond <= 0 {
			t.Errorf("%s: best %+v", data, b)
		}
	}
	t.Logf("compressed/uncompressed at 50 Mbit/s: text %.2f×, random %.2f×", ratios[benchv1.CopyText], ratios[benchv1.CopyRandom])
	if ratios[benchv1.CopyText] < 2 {
		t.Errorf("compression gains %.2f× on repetitive text, want at least 2×", ratios[benchv1.CopyText])
	}
	if ratios[benchv1.CopyRandom] > 1.1 {
		t.Errorf("compression gains %.2f× on random data, want at most 1.1×", ratios[benchv1.CopyRandom])
	}
}

// chaosMeshLink runs the chaos-mesh emulator for real: a bandwidth NetworkChaos acts on the run (the
// link measured within ±15 % of 50 Mbit/s, a copy of random data bound by it) and is gone after
// the run, and a delay, which this kernel cannot do (no sch_netem), ends in NetworkEmulationFailed
// quoting chaos-mesh, never in a silent run on the LAN.
func chaosMeshLink(t *testing.T, ns string, pg *fixture.Postgres) {
	tb := benchmark(ns, "chaos-bandwidth", pg, fixture.CredentialsSecret)
	tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "50Mbit", Emulator: benchv1.EmulatorChaosMesh}
	tb.Spec.Load = benchv1.LoadSpec{Initialize: true, Repetitions: 1,
		Copy: &benchv1.CopyLoad{Size: resource.MustParse("16Mi"), Data: benchv1.CopyRandom}}
	tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}
	end := complete(t, tb, 6*time.Minute)
	r := end.Status.Result("direct")
	if r == nil || r.Copy == nil || r.Link == nil || r.Link.Measured == nil || r.Link.Emulator != benchv1.EmulatorChaosMesh {
		t.Fatalf("direct across chaos-mesh: %+v", r)
	}
	t.Logf("chaos-mesh 50 Mbit/s: link measured %+v, copy %.2f MB/s", *r.Link.Measured, r.Copy.MBPerSecond)
	if ratio := float64(r.Link.Measured.BitsPerSecond) / 50e6; ratio < 0.85 || ratio > 1.15 {
		t.Errorf("measured %d bit/s across chaos-mesh's 50 Mbit/s (%.2f of it)", r.Link.Measured.BitsPerSecond, ratio)
	}
	// 50 Mbit/s is 6.25 MB/s of everything on the wire, headers included.
	if r.Copy.MBPerSecond > 6.25*1.15 {
		t.Errorf("the copy moved %.2f MB/s across 50 Mbit/s", r.Copy.MBPerSecond)
	}
	poll.Until(t, time.Minute, time.Second, "the run's NetworkChaos removed", func() error {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("chaos-mesh.org/v1alpha1")
		list.SetKind("NetworkChaosList")
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d NetworkChaos left, the first %s", len(list.Items), list.Items[0].GetName())
		}
		return nil
	})

	delay := benchmark(ns, "chaos-delay", pg, fixture.CredentialsSecret)
	delay.Spec.Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: wanRTT}, Emulator: benchv1.EmulatorChaosMesh}
	delay.Spec.Transports = delay.Spec.Transports[:1]
	if err := k8s.Create(ctx, delay); err != nil {
		t.Fatal(err)
	}
	failed := waitForEnd(t, ns, delay.Name, 4*time.Minute)
	// chaos-mesh's own words, and what to do about them.
	assertFailed(t, failed, conditions.ReasonNetworkEmulationFailed, "unable to set tcs for pod")
	assertFailed(t, failed, conditions.ReasonNetworkEmulationFailed, "sch_netem")
	if r := failed.Status.Result("direct"); r != nil && len(r.Runs) > 0 {
		t.Errorf("a run was recorded without its delay: %+v", r.Runs)
	}
}

// wirePerRow is a copy transport's bytes on the wire per row in its only run.
func wirePerRow(t *testing.T, tb *benchv1.TunnelBenchmark, transport string) float64 {
	t.Helper()
	r := tb.Status.Result(transport)
	if r == nil || len(r.Runs) == 0 || r.Runs[0].Wire == nil || r.Runs[0].Wire.BytesPerRow == nil {
		t.Fatalf("%s: no bytes per row on the wire in %+v", transport, r)
	}
	return *r.Runs[0].Wire.BytesPerRow
}

// openLoopAcrossTheWAN runs the LAN and the emulated WAN open-loop, at a rate both keep: every run
// records its schedule (the rate asked, the lag, nothing skipped), both run the rate, and they are
// compared by mean latency, the WAN's round trip making it slower however equal their tps.
func openLoopAcrossTheWAN(t *testing.T, ns string, pg *fixture.Postgres) {
	const rate = 100
	tb := benchmark(ns, "open-loop", pg, fixture.CredentialsSecret)
	tb.Spec.Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: wanRTT}}
	tb.Spec.Transports = []benchv1.TransportSpec{
		{Name: "lan", Type: benchv1.TransportDirect, Network: &benchv1.NetworkSpec{}},
		{Name: "wan", Type: benchv1.TransportDirect},
	}
	tb.Spec.Load.Builtin, tb.Spec.Load.Script, tb.Spec.Load.Protocol = "", "select 1;", benchv1.Protocol("simple")
	tb.Spec.Load.Clients, tb.Spec.Load.Threads, tb.Spec.Load.Repetitions = wanClients, 2, 3
	tb.Spec.Load.Rate, tb.Spec.Load.LatencyLimit = ptr.To[int32](rate), &metav1.Duration{Duration: 200 * time.Millisecond}
	end := complete(t, tb, 6*time.Minute)
	for _, r := range end.Status.Results {
		for _, run := range r.Runs {
			o := run.OpenLoop
			t.Logf("%s run %d: %.1f tps, %.3f ms, schedule %+v", r.Transport, run.Round, run.TPS, run.LatencyAvgMs, ptrVal(o))
			if o == nil || o.RateTPS != rate || o.Skipped != 0 || o.ScheduleLagMs < 0 || o.ScheduleLagMaxMs < o.ScheduleLagMs ||
				o.Late == nil || run.TPS < 0.8*rate || run.TPS > 1.2*rate {
				t.Errorf("%s run %d: %.1f tps, schedule %+v; want %d tps kept, nothing skipped", r.Transport, run.Round,
					run.TPS, ptrVal(o), rate)
			}
		}
	}
	lan, wan := end.Status.Result("lan"), end.Status.Result("wan")
	// The WAN's latency includes its 10 ms round trip; the LAN's is well under a millisecond.
	if c := wan.Comparison; c == nil || c.Verdict != benchv1.VerdictSlower || wan.LatencyAvgMs < wanRTT.Seconds()*1000 ||
		lan.LatencyAvgMs > 5 || c.Ratio > lan.LatencyAvgMs/wan.LatencyAvgMs*2 {
		t.Errorf("wan vs lan open-loop: %+v (latency %.3f vs %.3f ms), want slower by about their latencies' ratio",
			ptrVal(c), wan.LatencyAvgMs, lan.LatencyAvgMs)
	}
	if c := meta.FindStatusCondition(end.Status.Conditions, "RateNotSustained"); c != nil {
		t.Errorf("RateNotSustained at %d tps: %s", rate, c.Message)
	}
}
