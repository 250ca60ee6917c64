//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

// sweepBenchmark is a clients sweep of one direct transport with a script.
func sweepBenchmark(ns, name string, pg *fixture.Postgres, script string, clients []int32) *benchv1.TunnelBenchmark {
	tb := benchmark(ns, name, pg, fixture.CredentialsSecret)
	tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}
	tb.Spec.Load.Builtin, tb.Spec.Load.Script, tb.Spec.Load.Protocol = "", script, benchv1.Protocol("simple")
	tb.Spec.Load.Threads, tb.Spec.Load.Repetitions = 2, 2
	tb.Spec.Load.Duration = &metav1.Duration{Duration: 4 * time.Second}
	tb.Spec.Sweep = &benchv1.SweepSpec{Clients: clients}
	return tb
}

// logCurves logs each curve as the report would show it.
func logCurves(t *testing.T, end *benchv1.TunnelBenchmark) {
	t.Helper()
	for _, c := range end.Status.Sweep.Curves {
		for _, p := range c.Points {
			t.Logf("%s at %d: %.1f tps [%v, %v], gain %+v, limiter %q", c.Transport, p.Value, p.TPS, ptrVal(p.TPSLow),
				ptrVal(p.TPSHigh), ptrVal(p.Gain), p.Limiter)
		}
		t.Logf("%s: knee %v saturated %v peak %d (%s)", c.Transport, ptrVal(c.Knee), c.Saturated, c.Peak, c.KneeReason)
	}
}

// sleepSweepIsPhysics: a script that only sleeps 10 ms per transaction makes what the sleep allows
// its clients at every point (checkSleepPhysics: at most clients × 100 tps), whatever the path:
// the emulation-free check that a sweep runs each point's clients and reports what they did; and
// doubling clients doubles tps, so the curve is still gaining at its last point.
func sleepSweepIsPhysics(t *testing.T, ns string, pg *fixture.Postgres) {
	clients := []int32{1, 2, 4, 8}
	end := complete(t, sweepBenchmark(ns, "sleep-sweep", pg, "\\sleep 10 ms\n", clients), 6*time.Minute)
	sw := end.Status.Sweep
	if sw == nil || len(sw.Points) != len(clients) || len(sw.Curves) != 1 || end.Status.Progress != "8/8" {
		t.Fatalf("sweep %+v, progress %s", sw, end.Status.Progress)
	}
	logCurves(t, end)
	for i, p := range sw.Points {
		r := benchv1.FindResult(end.ResultsAt(i), "direct")
		for _, run := range r.Runs {
			checkSleepPhysics(t, fmt.Sprintf("%d clients, run %d", p.Value, run.Round), run.TPS, run.LatencyAvgMs, p.Value)
		}
		// The sleep is in no part: pgbench's threads are off the CPU for it.
		for _, run := range r.Runs {
			label := fmt.Sprintf("%d clients", p.Value)
			if checkBudgetAddsUp(t, label, run, benchv1.PartClient) && run.Budget.UnattributedMs < 0.9*run.Budget.RoundTripMs {
				t.Errorf("%s run %d: %.3f ms of a %.3f ms round trip of sleeping attributed to a part", label, run.Round,
					run.Budget.RoundTripMs-run.Budget.UnattributedMs, run.Budget.RoundTripMs)
			}
			if run.Limiter == nil || run.Limiter.Part != benchv1.PartLatency {
				t.Errorf("%s run %d: limiter %+v, want latency", label, run.Round, run.Limiter)
			}
		}
		if !strings.Contains(r.Command, fmt.Sprintf("-c %d ", p.Value)) {
			t.Errorf("%d clients: pgbench ran %q", p.Value, r.Command)
		}
	}
	c := sw.Curves[0]
	if c.Knee == nil || *c.Knee != 8 || c.Saturated || c.Peak != 8 {
		t.Errorf("a curve that doubles at every step: knee %v saturated %v peak %d (%s)", ptrVal(c.Knee), c.Saturated,
			c.Peak, c.KneeReason)
	}
	if end.Status.PlannedRunTime != "32s" {
		t.Errorf("planned run time %q, want 8 runs × 4s = 32s", end.Status.PlannedRunTime)
	}
	saveSweep(t, end)
}

// saveSweep keeps a real sweep's status in .cache/test-output/e2e/, for the figures of docs/studies/sweeps.md.
func saveSweep(t *testing.T, tb *benchv1.TunnelBenchmark) {
	dir := filepath.Join("..", "..", ".cache", "test-output", "e2e")
	b, err := yaml.Marshal(tb)
	if err == nil && os.MkdirAll(dir, 0o755) == nil {
		err = os.WriteFile(filepath.Join(dir, tb.Name+".yaml"), b, 0o644)
	}
	if err != nil {
		t.Logf("cannot keep the sweep's status: %v", err)
	}
}

// selectSweepFindsAKnee: `select 1` on the fixture server, beside its runner on a 2-core node,
// stops gaining within 1–8 clients: the curve reports a knee before its last point.
func selectSweepFindsAKnee(t *testing.T, ns string, pg *fixture.Postgres) {
	tb := sweepBenchmark(ns, "select-sweep", pg, "select 1;", []int32{1, 2, 4, 8})
	tb.Spec.Load.Repetitions, tb.Spec.Load.Warmup = 3, &metav1.Duration{Duration: time.Second}
	end := complete(t, tb, 8*time.Minute)
	logCurves(t, end)
	if c := findCondition(end, "LatencyInconsistent"); c != nil {
		t.Logf("LatencyInconsistent: %s", c.Message)
	}
	c := end.Status.Sweep.Curves
	if len(c) != 1 || c[0].Knee == nil || !c[0].Saturated || c[0].KneeReason == "" || *c[0].Knee == 8 {
		t.Errorf("select 1 on a 2-core node: curve %+v, want a knee before 8 clients", c)
	}
	saveSweep(t, end)
}

// sshTunnelsSweep: more tunnels give one ssh transport more throughput (the hand-run study: one
// tunnel saturates, as its one ssh process does), or the limiter at each point says why not here.
func sshTunnelsSweep(t *testing.T, ns string, pg *fixture.Postgres) {
	tb := benchmark(ns, "tunnels-sweep", pg, fixture.CredentialsSecret)
	tb.Spec.Transports = []benchv1.TransportSpec{{Name: "ssh", Type: benchv1.TransportSSH}}
	tb.Spec.Load.Clients, tb.Spec.Load.Threads, tb.Spec.Load.Repetitions = 8, 4, 3
	tb.Spec.Load.Duration, tb.Spec.Load.Warmup = &metav1.Duration{Duration: 4 * time.Second}, &metav1.Duration{Duration: time.Second}
	tb.Spec.Sweep = &benchv1.SweepSpec{Tunnels: []int32{1, 2, 4}}
	// select-only reads pgbench's tables: created here, so that the case runs on its own too.
	tb.Spec.Load.Initialize = true
	end := complete(t, tb, 8*time.Minute)
	logCurves(t, end)
	for i, p := range end.Status.Sweep.Points {
		if r := benchv1.FindResult(end.ResultsAt(i), "ssh"); r == nil || len(r.Tunnels) != int(p.Value) && p.Value > 1 {
			t.Errorf("%d tunnels: result %+v", p.Value, ptrVal(r))
		}
	}
	// Where the single tunnel's time went: each part of its path, threads read.
	if r := benchv1.FindResult(end.ResultsAt(0), "ssh"); r != nil {
		for _, run := range r.Runs {
			checkBudgetAddsUp(t, "1 tunnel", run, benchv1.PartClient, "tunnel-0", "gateway", benchv1.PartServer)
		}
	}
	c := end.Status.Sweep.Curves[0]
	limited := false
	for _, p := range c.Points {
		limited = limited || p.Limiter != ""
	}
	gained := c.Knee != nil && *c.Knee > 1
	if !gained && !limited {
		t.Errorf("more tunnels gained nothing and no limiter says why: %+v", c)
	}
	t.Logf("tunnels: gained %v (knee %v), limiters named %v", gained, ptrVal(c.Knee), limited)
	saveSweep(t, end)
}

// poolSizeSweep: a sidecar PgBouncer in transaction mode, 4 clients each sleeping 5 ms in the
// server per transaction, swept over pool sizes 1 and 4: one server connection serves the four
// clients one at a time, four serve them at once, so tps grows about fourfold, the pooler's own
// count of server connections never exceeds the point's pool size, and the one connection's pool
// is named the limiter.
func poolSizeSweep(t *testing.T, ns string, pg *fixture.Postgres) {
	tb := benchmark(ns, "pool-sweep", pg, fixture.CredentialsSecret)
	tb.Spec.Transports = []benchv1.TransportSpec{{Name: "pgbouncer", Type: benchv1.TransportPooler,
		Pooler: &benchv1.PoolerTransport{Placement: benchv1.PoolerSidecar, PoolMode: "transaction"}}}
	tb.Spec.Load.Builtin, tb.Spec.Load.Script, tb.Spec.Load.Protocol = "", "select pg_sleep(0.005);", benchv1.Protocol("simple")
	// Three rounds: the gain's paired interval from two has Student's t at 12.7, and two rounds
	// whose ratios were 4.37 and 3.30 left ×3.8 "indistinguishable" [0.63, 22.9] (CI's sequence,
	// 2026-12-02); from three, t is 4.3.
	tb.Spec.Load.Clients, tb.Spec.Load.Threads, tb.Spec.Load.Repetitions = 4, 2, 3
	tb.Spec.Load.Duration = &metav1.Duration{Duration: 4 * time.Second}
	tb.Spec.Sweep = &benchv1.SweepSpec{PoolSize: []int32{1, 4}}
	end := complete(t, tb, 6*time.Minute)
	logCurves(t, end)
	for i, p := range end.Status.Sweep.Points {
		r := benchv1.FindResult(end.ResultsAt(i), "pgbouncer")
		if r == nil || r.Pooler == nil || r.Pooler.ServerConnections == nil || *r.Pooler.ServerConnections < 1 ||
			*r.Pooler.ServerConnections > p.Value {
			t.Errorf("pool size %d: pooler %+v", p.Value, ptrVal(r))
			continue
		}
		t.Logf("pool size %d: %.0f tps, %d server connections", p.Value, r.TPS, *r.Pooler.ServerConnections)
		// Physics: with one server connection, one client sleeps 5 ms in the server while the other
		// three wait in PgBouncer's queue: the pooler holds 3/4 of the round trip; with four, none.
		for _, run := range r.Runs {
			label := fmt.Sprintf("pool size %d", p.Value)
			if !checkBudgetAddsUp(t, label, run, benchv1.PartClient, "pgbouncer") {
				continue
			}
			held, rt := budgetPart(run.Budget, "pgbouncer").HeldMs, run.Budget.RoundTripMs
			if p.Value == 1 && (held < 0.6*rt || held > 0.9*rt) || p.Value == 4 && held > 0.15*rt {
				t.Errorf("%s run %d: PgBouncer's queue held %.3f ms of a %.3f ms round trip: want 3/4 of it with one server "+
					"connection, none with four", label, run.Round, held, rt)
			}
			// The exhausted pool is the limiter with one server connection (clients waiting 3/4 of
			// their time, the rule's threshold 10 %); with four, not unless its queue held that much.
			pool := run.Limiter != nil && run.Limiter.Part == "pgbouncer"
			if p.Value == 1 && (!pool || !strings.Contains(run.Limiter.Evidence, "the pool was exhausted")) ||
				p.Value == 4 && pool && held < 0.1*rt {
				t.Errorf("%s run %d: limiter %+v with PgBouncer's queue at %.3f ms of %.3f", label, run.Round, run.Limiter, held, rt)
			}
		}
	}
	c := end.Status.Sweep.Curves[0]
	if g := c.Points[1].Gain; g == nil || g.Ratio < 3 || g.Verdict != benchv1.VerdictFaster {
		t.Errorf("four server connections instead of one: gain %+v, want about ×4", ptrVal(g))
	}
}
