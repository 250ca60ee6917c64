package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/report"
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
