//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	poolertransport "github.com/tunnelbench/tunnelbench/internal/transport/pooler"
	sshtransport "github.com/tunnelbench/tunnelbench/internal/transport/ssh"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

// mysqlThroughEveryPath benchmarks a real MariaDB (the fixture's, from the project's own image)
// with sysbench through a plain path, MySQL's own TLS (verified against the server's CA, with the
// client certificate sysbench 1.0.20 always presents), two SSH tunnels (one sysbench a tunnel,
// their figures summed and kept apiece), WireGuard and an emulated 10 ms link (then OpenVPN and
// HAProxy, from another namespace): the engine seam end to end, from the initialization to the
// figures, their intervals, the cost of each part and each path's own evidence that the load
// crossed it; then a storm of sequential connections through each path, opened by the runner's
// MySQL driver (sysbench 1.0.20 opens no connection per transaction).
func mysqlThroughEveryPath(t *testing.T) {
	tb := mysqlPathsBenchmark(t, "mysql", "mariadb-paths")
	tb.Spec.Transports = []benchv1.TransportSpec{
		{Name: "direct", Type: benchv1.TransportDirect},
		{Name: "tls", Type: benchv1.TransportTLS, TLS: &benchv1.TLSTransport{
			ClientCertSecret: &benchv1.LocalObjectReference{Name: fixture.MariaDBClientSecret}}},
		{Name: "ssh-2-tunnels", Type: benchv1.TransportSSH, SSH: &benchv1.SSHTransport{Tunnels: 2}},
		{Name: "wireguard", Type: benchv1.TransportVPN},
		{Name: "wan", Type: benchv1.TransportDirect, Network: &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: wanRTT},
			Bandwidth: "50Mbit"}},
		// The study's pooler: in the runner pod, TLS (verified) to the server.
		{Name: "mysqlpool", Type: benchv1.TransportPooler, Pooler: &benchv1.PoolerTransport{
			Placement: benchv1.PoolerSidecar, PoolMode: benchv1.PoolModeTransaction, PoolSize: mysqlPoolSize,
			ServerTLS: benchv1.ServerTLSVerifyFull}},
		// The same pooler next to the server, behind its Service: sysbench's logins cross the path.
		{Name: "mysqlpool-shared", Type: benchv1.TransportPooler, Pooler: &benchv1.PoolerTransport{
			Placement: benchv1.PoolerService, PoolMode: benchv1.PoolModeTransaction, PoolSize: mysqlPoolSize,
			ServerTLS: benchv1.ServerTLSVerifyFull}},
	}
	ns := tb.Namespace
	end := complete(t, tb, 10*time.Minute)
	if !strings.Contains(end.Status.ServerVersion, "MariaDB") || !strings.HasSuffix(end.Status.Server, ":3306/app") {
		t.Errorf("server %q, version %q", end.Status.Server, end.Status.ServerVersion)
	}
	for _, tr := range tb.Spec.Transports {
		r := end.Status.Result(tr.Name)
		if r == nil || len(r.Runs) != 3 || r.TPS <= 0 || r.Transactions <= 0 || r.LatencyAvgMs <= 0 {
			t.Fatalf("%s: result %+v", tr.Name, r)
		}
		if p := r.Provenance; p == nil || !strings.HasPrefix(p.PgbenchVersion, "sysbench 1.") {
			t.Errorf("%s: provenance %+v", tr.Name, r.Provenance)
		}
		// The pooler's server connections are TLS: the server reports it for the session.
		wantTLS := tr.Type == benchv1.TransportTLS || tr.Type == benchv1.TransportPooler
		if wantTLS != (r.TLS != nil) || wantTLS && !strings.HasPrefix(r.TLS.Version, "TLSv1.") {
			t.Errorf("%s: the server reported TLS %+v", tr.Name, r.TLS)
		}
		run := r.Runs[0]
		if len(run.Cost) == 0 || run.Cost[0].Part != benchv1.PartClient || run.Cost[0].CPUMicrosPerTransaction == nil {
			t.Errorf("%s: cost %+v", tr.Name, run.Cost)
		}
		if server := partOf(run, benchv1.PartServer); server == nil || server.CPUMicrosPerTransaction == nil {
			t.Errorf("%s: the server's cost %+v", tr.Name, server)
		}
		t.Logf("%s: %.0f tps, %.3f ms, comparison %+v, tls %+v, limiter %+v, cost %s", tr.Name, r.TPS, r.LatencyAvgMs,
			r.Comparison, r.TLS, run.Limiter, costText(run.Cost))
	}
	for _, tr := range tb.Spec.Transports[1:] {
		if c := end.Status.Result(tr.Name).Comparison; c == nil || c.Verdict == "" {
			t.Errorf("%s has no comparison with direct: %+v", tr.Name, c)
		}
	}
	assertTwoTunnels(t, end.Status.Result("ssh-2-tunnels"))
	assertWireGuard(t, end, map[string]bool{"wireguard": false})
	assertMySQLAcrossTheLink(t, end.Status.Result("wan"), tb.Spec.Load.Clients)
	assertMySQLPooler(t, end.Status.Result("mysqlpool"), benchv1.PoolerSidecar)
	assertMySQLPooler(t, end.Status.Result("mysqlpool-shared"), benchv1.PoolerService)
	assertMySQLStorms(t, end, "tls", "ssh-2-tunnels", "wireguard", "wan", "mysqlpool", "mysqlpool-shared")

	t.Run("OpenVPN and HAProxy, from a privileged namespace", func(t *testing.T) { mysqlOverOpenVPN(t, ns, tb) })
	t.Run("a sweep of the MySQL pooler's size: one server connection against four", func(t *testing.T) { mysqlPoolSizeSweep(t, tb) })
}

// mysqlPoolSizeSweep: the MySQL pooler in the runner pod, 4 clients each sleeping 5 ms in the
// server per transaction (SELECT SLEEP(0.005), which pins no session), swept over pool sizes 1
// and 4. Physics: one server connection serves the clients one at a time, at most 200
// transactions a second, while the other three wait in the pooler's queue, which is named the
// limiter; four serve them at once, about four times as fast. The pooler's own count of server
// connections never exceeds the point's pool size.
func mysqlPoolSizeSweep(t *testing.T, paths *benchv1.TunnelBenchmark) {
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: paths.Namespace, Name: "mariadb-pool-sweep"},
		Spec: *paths.Spec.DeepCopy()}
	tb.Spec.Transports = []benchv1.TransportSpec{{Name: "mysqlpool", Type: benchv1.TransportPooler,
		Pooler: &benchv1.PoolerTransport{Placement: benchv1.PoolerSidecar, PoolMode: benchv1.PoolModeTransaction}}}
	tb.Spec.Load.Builtin, tb.Spec.Load.Script, tb.Spec.Load.Initialize = "", "SELECT SLEEP(0.005);", false
	// Simple queries: prepared statements would pin each client to a server connection.
	tb.Spec.Load.Clients, tb.Spec.Load.Threads, tb.Spec.Load.ConnectionStorm = 4, 2, nil
	tb.Spec.Load.Protocol = benchv1.Protocol("simple")
	tb.Spec.Load.Duration = &metav1.Duration{Duration: 4 * time.Second}
	tb.Spec.Sweep = &benchv1.SweepSpec{PoolSize: []int32{1, 4}}
	end := complete(t, tb, 6*time.Minute)
	logCurves(t, end)
	for i, p := range end.Status.Sweep.Points {
		r := benchv1.FindResult(end.ResultsAt(i), "mysqlpool")
		if r == nil || r.Pooler == nil || r.Pooler.ServerConnections == nil || *r.Pooler.ServerConnections < 1 ||
			*r.Pooler.ServerConnections > p.Value {
			t.Errorf("pool size %d: pooler %+v", p.Value, ptrVal(r))
			continue
		}
		t.Logf("pool size %d: %.0f tps, %d server connections", p.Value, r.TPS, *r.Pooler.ServerConnections)
		for _, run := range r.Runs {
			label := fmt.Sprintf("pool size %d run %d", p.Value, run.Round)
			if p.Value == 1 && (run.TPS > 1.02*200 || run.TPS < 0.6*200) {
				t.Errorf("%s: %.1f tps through one server connection, each transaction sleeping 5 ms: want at most 200", label, run.TPS)
			}
			pool := run.Limiter != nil && run.Limiter.Part == poolertransport.MySQLPoolerContainer
			if p.Value == 1 && (!pool || !strings.Contains(run.Limiter.Evidence, "the pool was exhausted")) {
				t.Errorf("%s: limiter %+v, want the exhausted pool", label, run.Limiter)
			}
			t.Logf("%s: %.1f tps, limiter %+v", label, run.TPS, run.Limiter)
		}
	}
	c := end.Status.Sweep.Curves[0]
	if g := c.Points[1].Gain; g == nil || g.Ratio < 3 || g.Verdict != benchv1.VerdictFaster {
		t.Errorf("four server connections instead of one: gain %+v, want about ×4", ptrVal(g))
	}
}

// mysqlPathsBenchmark deploys a MariaDB (the fixture's) in a new namespace and returns the MySQL
// study's benchmark of it without transports: sysbench's point selects from two clients, three
// repetitions of 3 s and a storm of 300 connections.
func mysqlPathsBenchmark(t *testing.T, prefix, name string) *benchv1.TunnelBenchmark {
	t.Helper()
	ns := newNamespace(t, prefix)
	// On the second node when there is one: the first then has room for the server's PostgreSQL,
	// two gateways and a runner with its sidecars at once.
	var at fixture.Placement
	if second := os.Getenv("E2E_SECOND_NODE"); second != "" {
		at = fixture.Placement{Node: second, Tolerations: []corev1.Toleration{{Key: secondNodeTaint,
			Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
	}
	db, err := fixture.DeployMariaDBOn(ctx, k8s, ns, env(t, "E2E_MARIADB_IMAGE"), at, 3*time.Minute)
	if err != nil {
		dump(t, ns)
		t.Fatal(err)
	}
	return &benchv1.TunnelBenchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server: benchv1.ServerSpec{Engine: benchv1.EngineMySQL, External: &benchv1.ExternalServer{
				// No port: the engine's own, 3306.
				Host: db.Host, Database: "app",
				CredentialsSecret: benchv1.LocalObjectReference{Name: fixture.MariaDBCredentialsSecret},
				CASecret:          &benchv1.LocalObjectReference{Name: fixture.MariaDBCASecret},
			}},
			Load: benchv1.LoadSpec{
				Builtin: "oltp_point_select", Clients: 2, Scale: 1, Initialize: true,
				Duration: &metav1.Duration{Duration: 3 * time.Second}, ProgressInterval: &metav1.Duration{Duration: time.Second},
				Repetitions: 3, Warmup: &metav1.Duration{Duration: time.Second},
				// 300 connections in 6 batches: across the 10 ms link, about 12 s.
				ConnectionStorm: &benchv1.ConnectionStorm{Connections: 300},
			},
			Runner: &benchv1.RunnerSpec{Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("200m")}}},
			Timeout: &metav1.Duration{Duration: 10 * time.Minute},
		},
	}
}

// mysqlFaultsOnItsOwnServer runs the MySQL fault cases against a MariaDB of their own: they
// measure nothing and kill the server, so they run in the checks pass, apart from the study's.
func mysqlFaultsOnItsOwnServer(t *testing.T) {
	paths := mysqlPathsBenchmark(t, "mysql-faults", "mariadb-tables")
	makeTables(t, paths)
	mysqlFaults(t, paths)
	// Its server, on the second node, goes before the study's starts there.
	deleteNamespace(t, paths.Namespace)
}

// mysqlFaults kills, in a MySQL benchmark's second round, the MySQL pooler (its sidecar, then
// its shared pod), the SSH gateway its tunnel crosses, then the MariaDB server itself (its
// Deployment starts another): each ends the benchmark Failed, soon,
// with the reason the fault suite names on PostgreSQL, the first round kept, nothing left behind.
func mysqlFaults(t *testing.T, paths *benchv1.TunnelBenchmark) {
	ssh := []benchv1.TransportSpec{{Name: "ssh", Type: benchv1.TransportSSH}}
	pooled := []benchv1.TransportSpec{{Name: "mysqlpool", Type: benchv1.TransportPooler, Pooler: &benchv1.PoolerTransport{
		Placement: benchv1.PoolerSidecar, PoolMode: benchv1.PoolModeTransaction, PoolSize: mysqlPoolSize}}}
	shared := []benchv1.TransportSpec{{Name: "mysqlpool-shared", Type: benchv1.TransportPooler, Pooler: &benchv1.PoolerTransport{
		Placement: benchv1.PoolerService, PoolMode: benchv1.PoolModeTransaction, PoolSize: mysqlPoolSize}}}
	cases := []faultCase{
		{name: "MySQL pooler sidecar container killed", transports: pooled, kill: killSidecar(poolertransport.MySQLPoolerContainer),
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonPoolerUnavailable},
			wantText: poolertransport.MySQLPoolerContainer},
		{name: "shared MySQL pooler pod killed", transports: shared,
			chaos: func(ns, b string) *unstructured.Unstructured {
				return podKill(ns, benchmarkPods(b, poolertransport.PoolerComponent))
			},
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonPoolerUnavailable}, wantText: "pod was replaced during the run"},
		{name: "SSH gateway pod killed", transports: ssh,
			chaos: func(ns, b string) *unstructured.Unstructured {
				return podKill(ns, benchmarkPods(b, sshtransport.GatewayComponent))
			},
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonTunnelDown}, wantText: "tunnel"},
		{name: "MariaDB server pod killed", transports: []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}},
			chaos: func(ns, _ string) *unstructured.Unstructured {
				return podKill(ns, map[string]string{"app.kubernetes.io/name": "mariadb",
					"app.kubernetes.io/part-of": "tunnelbench-fixture"})
			},
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonConnectionLost},
			wantText: "the connection to the server was lost during the run"},
	}
	for i, fc := range cases {
		t.Run(fc.name, func(t *testing.T) {
			if fc.kill != nil && os.Getenv("E2E_CONTAINERD_SOCKET") == "" {
				t.Skip("E2E_CONTAINERD_SOCKET is not set: killing a native sidecar needs the node's containerd (the local cluster)")
			}
			tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: paths.Namespace,
				Name: fmt.Sprintf("mariadb-fault-%d", i+1)}, Spec: *paths.Spec.DeepCopy()}
			tb.Spec.Transports, tb.Spec.Load.ConnectionStorm = fc.transports, nil
			row := injectFault(t, tb, fc)
			t.Logf("| %s | %s | %s | %.0f |", row.fault, row.phase, row.reason, row.seconds)
		})
	}
}

// mysqlOverOpenVPN runs the MySQL study's OpenVPN path to the same MariaDB from a namespace whose
// Pod Security admits the tunnel's TUN device (the chart allows privileged transports here): the
// load crosses the tunnel, whose evidence names what it negotiated, with MySQL's TLS off inside;
// and HAProxy, whose sessions count the load's connections. (Each benchmark holds two gateways at
// most: with a runner and its sidecars they fill the first node's two cores' requests.)
func mysqlOverOpenVPN(t *testing.T, serverNS string, paths *benchv1.TunnelBenchmark) {
	ns := newNamespaceAt(t, "e2e-mysql-openvpn", "privileged")
	copyServerSecrets(t, serverNS, ns, fixture.MariaDBCredentialsSecret, fixture.MariaDBCASecret)
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mariadb-openvpn"}, Spec: *paths.Spec.DeepCopy()}
	// No direct again: the first benchmark measured it, and CI's time is better spent elsewhere;
	// HAProxy is compared with the tunnel.
	tb.Spec.Transports = []benchv1.TransportSpec{
		{Name: "openvpn", Type: benchv1.TransportVPN, VPN: &benchv1.VPNTransport{Kind: benchv1.VPNOpenVPN}},
		{Name: "haproxy", Type: benchv1.TransportProxy}}
	// The tables are there: the first benchmark made them.
	tb.Spec.Load.Initialize = false
	end := complete(t, tb, 6*time.Minute)
	r := end.Status.Result("openvpn")
	if r == nil || len(r.Runs) != 3 || r.TPS <= 0 {
		t.Fatalf("openvpn: result %+v", r)
	}
	if c := end.Status.Result("haproxy").Comparison; c == nil || c.Baseline != "openvpn" {
		t.Errorf("haproxy: comparison %+v, want one with openvpn", c)
	}
	t.Logf("openvpn: %.0f tps, %.3f ms, comparison %+v, cost %s", r.TPS, r.LatencyAvgMs, r.Comparison, costText(r.Runs[0].Cost))
	assertOpenVPNEvidence(t, r)
	// sysbench keeps one connection per thread: the proxy carried at least the two clients'.
	assertProxy(t, end, "haproxy", 2)
	assertMySQLStorms(t, end)
}

// assertMySQLStorms checks every transport's storm: each of its connections opened by the
// runner's driver, none failed; across the emulated link (wan) each login takes at least two
// round trips (the TCP handshake, then the server's greeting and the login's answer) and each
// cycle one more for SELECT 1. Where physics makes the order certain it is asserted beyond the
// run-to-run noise: TLS's handshake (two more round trips, the server's signature) on top of
// direct's login. The other paths' orders are logged, not asserted: direct and the proxy dial
// the Service's name and pay a cluster DNS lookup a connection (about 1 to 2 ms here, 2026-12-03,
// as PostgreSQL's setup probe's resolve phase shows), the tunnels dial an address, so a tunnel
// may connect cheaper than direct (OpenVPN did: 1.13 ms [0.92, 1.30] against 2.78 [2.13, 3.41]).
func assertMySQLStorms(t *testing.T, end *benchv1.TunnelBenchmark, paths ...string) {
	t.Helper()
	want := end.Spec.Load.ConnectionStorm.Connections
	for _, r := range end.Status.Results {
		s := r.ConnectionStorm
		if s == nil || s.Connections != int64(want) || s.FailedConnections != 0 || !strings.Contains(s.Command, "tunnelbench-runner") {
			t.Errorf("%s: storm %+v, want %d connections by the runner's driver", r.Transport, s, want)
			continue
		}
		t.Logf("%s storm: %.1f connections a second, %.3f ms to connect, %.3f ms a cycle", r.Transport,
			s.ConnectionsPerSecond, s.MeanConnectMs, s.MeanConnectionMs)
		if r.Link != nil && (s.MeanConnectMs < 2*10 || s.MeanConnectionMs < 3*10) {
			t.Errorf("%s: %.3f ms to connect, %.3f ms a cycle across a 10 ms link: fewer round trips than a login takes",
				r.Transport, s.MeanConnectMs, s.MeanConnectionMs)
		}
	}
	connect := stormIntervals(t, end)
	for _, path := range paths {
		if c, d := connect["direct"], connect[path]; c != nil && d != nil {
			t.Logf("%s vs direct per connection: %s", path, intervalOrder(d, c))
		}
	}
	if c, d := connect["direct"], connect["tls"]; c != nil && d != nil && !cheaperBeyondNoise(c, d) {
		t.Errorf("tls does not connect dearer than direct beyond the run-to-run noise: %s", intervalOrder(d, c))
	}
	// The pooler in the runner pod logs its clients in itself, over loopback: no DNS lookup, no
	// server round trip, no TLS handshake; direct pays all but the last, TLS all three.
	if p := connect["mysqlpool"]; p != nil {
		for _, other := range []string{"direct", "tls"} {
			if o := connect[other]; o != nil && !cheaperBeyondNoise(p, o) {
				t.Errorf("the pooler does not connect cheaper than %s beyond the run-to-run noise: %s", other, intervalOrder(p, o))
			}
		}
	}
}

// mysqlPoolSize is the MySQL pooler's server connections in the e2e: as many as sysbench's
// clients, so that none waits, and far fewer than the storm's connections.
const mysqlPoolSize = 2

// assertMySQLPooler checks the MySQL pooler's own evidence: every transaction sysbench counted
// went through it (it counts the runner's preflight and probes too), on at most its pool's
// server connections however many clients the storm opened, over TLS to the server; and its CPU a
// transaction is a part of every run's cost: its container's in the runner pod, or its own pod's
// placed as a service.
func assertMySQLPooler(t *testing.T, r *benchv1.TransportResult, placement benchv1.PoolerPlacement) {
	t.Helper()
	if r == nil || r.Pooler == nil {
		t.Fatalf("MySQL pooler (%s): no pooler result: %+v", placement, r)
	}
	p := r.Pooler
	t.Logf("%s: %+v, %v transactions, %v server connections", r.Transport, *p, p.Transactions, p.ServerConnections)
	if p.Implementation != "TunnelBench mysqlpool" || p.Placement != placement ||
		!strings.HasPrefix(p.ServerHop.TLS, "TLSv1.") || p.ClientHop.TLS != "none" {
		t.Errorf("%s: %+v", r.Transport, *p)
	}
	last := r.Runs[len(r.Runs)-1]
	if p.Transactions == nil || *p.Transactions < last.Transactions || p.ServerConnections == nil ||
		*p.ServerConnections < 1 || *p.ServerConnections > mysqlPoolSize {
		t.Errorf("%s: counted %v transactions (sysbench %d) on %v server connections (pool %d)",
			r.Transport, p.Transactions, last.Transactions, p.ServerConnections, mysqlPoolSize)
	}
	part := poolertransport.MySQLPoolerContainer
	if placement == benchv1.PoolerService {
		part = poolertransport.PoolerPart
	}
	assertSidecarCost(t, *r, part)
}

// assertMySQLAcrossTheLink checks a MySQL path across an emulated 10 ms, 50 Mbit/s link against
// what the link allows: the runner measured it as asked (SELECT 1's round trip, random rows'
// rate, a login of several round trips); oltp_point_select sends one statement an event (its
// script sets point_selects to 1), so each transaction crosses the link once: 50–105 % of
// clients / RTT, the link holding each about 10 ms, the network named the limiter.
func assertMySQLAcrossTheLink(t *testing.T, r *benchv1.TransportResult, clients int32) {
	t.Helper()
	if r == nil || r.Link == nil || r.Link.Measured == nil || r.Link.Asked.RTTMs != 10 {
		t.Fatalf("wan: result %+v", r)
	}
	m := r.Link.Measured
	t.Logf("wan: %.1f tps, %.3f ms, link measured %+v", r.TPS, r.LatencyAvgMs, *m)
	if math.Abs(m.RTTMs-10) > 2 || m.ConnectMs < 2*10 {
		t.Errorf("wan: measured RTT %.3f ms and connection %.3f ms across a 10 ms link", m.RTTMs, m.ConnectMs)
	}
	if ratio := float64(m.BitsPerSecond) / 50e6; ratio < 0.85 || ratio > 1.15 {
		t.Errorf("wan: measured %d bit/s for 50 Mbit/s (%.2f)", m.BitsPerSecond, ratio)
	}
	bound := float64(clients) / wanRTT.Seconds()
	for _, run := range r.Runs {
		if run.TPS < 0.5*bound || run.TPS > 1.05*bound || run.LatencyAvgMs < 10 {
			t.Errorf("wan run %d: %.1f tps at %.3f ms, want 50–105 %% of %.0f, each transaction at least the 10 ms RTT",
				run.Round, run.TPS, run.LatencyAvgMs, bound)
		}
		if run.Limiter == nil || run.Limiter.Part != benchv1.PartNetwork {
			t.Errorf("wan run %d: limiter %+v, want network", run.Round, run.Limiter)
		}
		if checkBudgetAddsUp(t, "wan", run, benchv1.PartClient, "link") {
			if link := budgetPart(run.Budget, "link"); math.Abs(link.HeldMs-10) > 1 {
				t.Errorf("wan run %d: the link held each transaction %.3f ms, want 10 ms within 10 %%", run.Round, link.HeldMs)
			}
		}
	}
}

// assertTwoTunnels: two sysbench processes ran, one a tunnel's local port, each with its own
// figures, adding up to the transport's; ssh negotiated a cipher.
func assertTwoTunnels(t *testing.T, r *benchv1.TransportResult) {
	t.Helper()
	t.Logf("ssh: %+v, tunnels %+v, executed %q", ptrVal(r.SSH), r.Tunnels, r.Executed)
	if r.SSH == nil || r.SSH.Cipher == "" {
		t.Errorf("ssh: negotiated %+v", r.SSH)
	}
	if strings.Count(r.Executed, "sysbench ") != 2 || strings.Count(r.Executed, "--mysql-port=") != 2 {
		t.Errorf("ssh: executed %q, want two sysbench processes, each at its tunnel's port", r.Executed)
	}
	if len(r.Tunnels) != 2 {
		t.Fatalf("ssh: %d tunnels' figures, want 2", len(r.Tunnels))
	}
	var tps float64
	for _, tn := range r.Tunnels {
		if tn.TPS <= 0 || tn.LatencyAvgMs <= 0 {
			t.Errorf("ssh: tunnel %+v", tn)
		}
		tps += tn.TPS
	}
	// The tunnels' figures are the latest run's.
	if latest := r.Runs[len(r.Runs)-1].TPS; math.Abs(tps-latest) > 0.02*latest {
		t.Errorf("ssh: the tunnels make %.1f tps, the latest run %.1f", tps, latest)
	}
}

func costText(cost []benchv1.PartCost) string {
	var parts []string
	for _, c := range cost {
		if c.CPUMicrosPerTransaction != nil {
			parts = append(parts, fmt.Sprintf("%s %.1f µs/tx", c.Part, *c.CPUMicrosPerTransaction))
		}
	}
	return strings.Join(parts, ", ")
}
