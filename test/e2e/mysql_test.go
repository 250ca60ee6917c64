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
	ns := newNamespace(t, "mysql")
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
	tb := &benchv1.TunnelBenchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mariadb-paths"},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server: benchv1.ServerSpec{Engine: benchv1.EngineMySQL, External: &benchv1.ExternalServer{
				// No port: the engine's own, 3306.
				Host: db.Host, Database: "app",
				CredentialsSecret: benchv1.LocalObjectReference{Name: fixture.MariaDBCredentialsSecret},
				CASecret:          &benchv1.LocalObjectReference{Name: fixture.MariaDBCASecret},
			}},
			Transports: []benchv1.TransportSpec{
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
			},
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
	assertMySQLPooler(t, end.Status.Result("mysqlpool"))
	assertMySQLStorms(t, end, "tls", "ssh-2-tunnels", "wireguard", "wan", "mysqlpool")

	t.Run("OpenVPN and HAProxy, from a privileged namespace", func(t *testing.T) { mysqlOverOpenVPN(t, ns, tb) })
	t.Run("faults: the SSH gateway and the server killed mid-run", func(t *testing.T) { mysqlFaults(t, tb) })
}

// mysqlFaults kills, in a MySQL benchmark's second round, the SSH gateway its tunnel crosses, then
// the MariaDB server itself (its Deployment starts another): each ends the benchmark Failed, soon,
// with the reason the fault suite names on PostgreSQL, the first round kept, nothing left behind.
func mysqlFaults(t *testing.T, paths *benchv1.TunnelBenchmark) {
	ssh := []benchv1.TransportSpec{{Name: "ssh", Type: benchv1.TransportSSH}}
	pooled := []benchv1.TransportSpec{{Name: "mysqlpool", Type: benchv1.TransportPooler, Pooler: &benchv1.PoolerTransport{
		Placement: benchv1.PoolerSidecar, PoolMode: benchv1.PoolModeTransaction, PoolSize: mysqlPoolSize}}}
	cases := []faultCase{
		{name: "MySQL pooler sidecar container killed", transports: pooled, kill: killSidecar(poolertransport.MySQLPoolerContainer),
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonPoolerUnavailable},
			wantText: poolertransport.MySQLPoolerContainer},
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
// server connections however many clients the storm opened, over TLS to the server.
func assertMySQLPooler(t *testing.T, r *benchv1.TransportResult) {
	t.Helper()
	if r == nil || r.Pooler == nil {
		t.Fatalf("mysqlpool: no pooler result: %+v", r)
	}
	p := r.Pooler
	t.Logf("mysqlpool: %+v, %v transactions, %v server connections", *p, p.Transactions, p.ServerConnections)
	if p.Implementation != "TunnelBench mysqlpool" || p.Placement != benchv1.PoolerSidecar ||
		!strings.HasPrefix(p.ServerHop.TLS, "TLSv1.") || p.ClientHop.TLS != "none" {
		t.Errorf("mysqlpool: %+v", *p)
	}
	last := r.Runs[len(r.Runs)-1]
	if p.Transactions == nil || *p.Transactions < last.Transactions || p.ServerConnections == nil ||
		*p.ServerConnections < 1 || *p.ServerConnections > mysqlPoolSize {
		t.Errorf("mysqlpool: counted %v transactions (sysbench %d) on %v server connections (pool %d)",
			p.Transactions, last.Transactions, p.ServerConnections, mysqlPoolSize)
	}
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
