package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/report"
	"github.com/tunnelbench/tunnelbench/internal/runner"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// transportResult turns a runner's report into a status result.
func transportResult(t benchv1.TransportSpec, job string, rep *report.Report, conn transport.Connection) benchv1.TransportResult {
	res := rep.Result
	out := benchv1.TransportResult{
		Transport:               t.Name,
		Type:                    t.Type,
		Job:                     job,
		TPS:                     res.TPS,
		TPSIncludingConnections: res.TPSIncludingConnections,
		LatencyAvgMs:            res.LatencyAvgMs,
		LatencyStddevMs:         res.LatencyStddevMs,
		ConnectionTimeMs:        res.ConnectionTimeMs,
		Transactions:            res.Transactions,
		FailedTransactions:      res.FailedTransactions,
		Command:                 rep.Command,
		Connection:              conn.ConnInfo(),
	}
	if rep.TLS != nil {
		out.TLS = &benchv1.NegotiatedTLS{Version: rep.TLS.Version, Cipher: rep.TLS.Cipher}
	}
	if rep.SSH != nil {
		out.SSH = &benchv1.NegotiatedSSH{Cipher: rep.SSH.Cipher, MAC: rep.SSH.MAC, Compression: rep.SSH.Compression}
	}
	for _, tn := range rep.Tunnels {
		out.Tunnels = append(out.Tunnels, benchv1.TunnelResult{Tunnel: int32(tn.Index), TPS: tn.TPS,
			LatencyAvgMs: tn.LatencyAvgMs, Transactions: tn.Transactions, FailedTransactions: tn.Failed})
	}
	if res.Reconnect && res.Transactions > 0 {
		// One connection per transaction, failed ones included.
		perSecond := res.TPS * float64(res.Transactions+res.FailedTransactions) / float64(res.Transactions)
		out.ConnectionsPerSecond = &perSecond
	}
	if s := rep.Storm; s != nil {
		out.ConnectionStorm = stormResult(s)
	}
	if t.Type == benchv1.TransportPooler {
		out.Pooler = poolerResult(t, rep, conn.PoolerKind == runner.PoolerOpaque)
	}
	if !rep.StartTime.IsZero() {
		out.StartTime = &metav1.Time{Time: rep.StartTime}
	}
	if !rep.EndTime.IsZero() {
		out.EndTime = &metav1.Time{Time: rep.EndTime}
	}
	return out
}

// summarize derives the progress, each result's ratio to the baseline (the first transport in
// the spec) and the best transport from the recorded results.
func summarize(tb *benchv1.TunnelBenchmark) {
	tb.Status.Progress = benchv1.ProgressString(len(tb.Status.Results), len(tb.Spec.Transports))
	baseline := tb.Status.Result(tb.Spec.Transports[0].Name)
	tb.Status.Best = nil
	for i := range tb.Status.Results {
		res := &tb.Status.Results[i]
		res.RatioToBaseline = nil
		if baseline != nil && baseline.TPS > 0 {
			ratio := res.TPS / baseline.TPS
			res.RatioToBaseline = &ratio
		}
		if tb.Status.Best == nil || res.TPS > tb.Status.Best.TPS {
			tb.Status.Best = &benchv1.BestTransport{Transport: res.Transport, TPS: res.TPS}
		}
	}
}

func stormResult(s *report.Storm) *benchv1.ConnectionStormResult {
	out := &benchv1.ConnectionStormResult{Connections: s.Connections, FailedConnections: s.Failed,
		ConnectionsPerSecond: s.PerSecond, MeanConnectMs: s.MeanConnectMs, Command: s.Command}
	if s.PerSecond > 0 {
		out.TotalSeconds = float64(s.Connections+s.Failed) / s.PerSecond
		out.MeanConnectionMs = 1000 / s.PerSecond
	}
	return out
}

// poolerResult records both hops of a pooler transport: how each side authenticates (from the
// pooler's configuration) and the TLS each negotiated (measured by the runner and the server), and
// the pooler's own counters when the runner could read them.
func poolerResult(t benchv1.TransportSpec, rep *report.Report, cnpg bool) *benchv1.PoolerResult {
	p := t.EffectivePooler()
	out := &benchv1.PoolerResult{
		Implementation: "PgBouncer", Placement: p.Placement, PoolMode: p.PoolMode,
		ClientHop: benchv1.Hop{Auth: "scram-sha-256", TLS: "none"},
		ServerHop: benchv1.Hop{Auth: "password", TLS: "none"},
	}
	switch {
	case p.Placement == benchv1.PoolerSidecar:
		out.ClientHop.Auth = "trust"
	case cnpg:
		// CloudNativePG's PgBouncer looks passwords up with auth_query and logs into the server
		// with the user's own SCRAM secret.
		out.Implementation = "CloudNativePG Pooler"
		out.ClientHop.Auth = "scram-sha-256 (auth_query)"
	}
	if rp := rep.Pooler; rp != nil {
		if rp.ClientTLS != nil {
			out.ClientHop.TLS = rp.ClientTLS.Version + "/" + rp.ClientTLS.Cipher
		}
		if rp.Counted {
			tx, servers := rp.Transactions, int32(rp.ServerConnections)
			out.Transactions, out.ServerConnections = &tx, &servers
		}
	}
	// pg_stat_ssl describes the server's end of the pooler's connection.
	if rep.TLS != nil {
		out.ServerHop.TLS = rep.TLS.Version + "/" + rep.TLS.Cipher
	}
	return out
}
