package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/report"
	"github.com/tunnelbench/tunnelbench/internal/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// transportResult turns a runner's report into a status result: what every transport measures;
// each transport then records its own part (Transport.Record).
func transportResult(t benchv1.TransportSpec, job string, rep *report.Report, pod specs.Pod) benchv1.TransportResult {
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
		Connection:              transport.ConnInfo(pod.Env),
	}
	if rep.TLS != nil {
		out.TLS = &benchv1.NegotiatedTLS{Version: rep.TLS.Version, Cipher: rep.TLS.Cipher}
	}
	if res.Reconnect && res.Transactions > 0 {
		// One connection per transaction, failed ones included.
		perSecond := res.TPS * float64(res.Transactions+res.FailedTransactions) / float64(res.Transactions)
		out.ConnectionsPerSecond = &perSecond
	}
	if s := rep.Storm; s != nil {
		out.ConnectionStorm = stormResult(s)
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
