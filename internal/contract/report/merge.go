package report

import (
	"fmt"
	"slices"

	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// MergePods is one run's report from the reports of its N runner pods, which ran their shares of
// the load over the same window (they started together): pgbench's figures added up
// (engine.Aggregate: tps and transactions summed, latency weighted), the latency histograms merged
// weighted by their sampling (latency.MergeWeighted), bytes on the wire summed, tunnels listed pod
// after pod, the window from the first start to the last end. When every pod cut its figures to
// the stretch all of them covered (Report.Window), the run's transactions and tps are their sums
// over it, and its histograms are the cut ones. What describes the path rather than
// the load (TLS, SSH, the link, a connection's setup, the pooler, the storm, versions) is pod 0's.
// CPU is left unmeasured: each pod's accounting is its own, against its own cores.
func MergePods(pods []*Report) (*Report, error) {
	if len(pods) == 0 || slices.Contains(pods, nil) {
		return nil, fmt.Errorf("a run of %d pods with a report missing", len(pods))
	}
	first := pods[0]
	out := &Report{TLS: first.TLS, ServerVersion: first.ServerVersion, PgbenchVersion: first.PgbenchVersion, SSH: first.SSH,
		Pooler: first.Pooler, Storm: first.Storm, Link: first.Link, Setup: first.Setup, Command: first.Command,
		Executed:  first.Executed,
		StartTime: first.StartTime, EndTime: first.EndTime}
	var results []*engine.Result
	var samples []latency.Sample
	for i, p := range pods {
		if p.Result == nil {
			return nil, fmt.Errorf("runner pod %d of %d left no pgbench result", i, len(pods))
		}
		results = append(results, p.Result)
		if l := p.Latency; l != nil {
			samples = append(samples, latency.Sample{Encoded: l.Histogram, Rate: l.SamplingRate})
		}
		for _, tn := range p.Tunnels {
			tn.Index = len(out.Tunnels)
			out.Tunnels = append(out.Tunnels, tn)
		}
		if p.StartTime.Before(out.StartTime) {
			out.StartTime = p.StartTime
		}
		if p.EndTime.After(out.EndTime) {
			out.EndTime = p.EndTime
		}
		out.Wire = addWire(out.Wire, p.Wire, i == 0)
	}
	out.Result = engine.Aggregate(results)
	out.Window = sumWindows(pods)
	if w := out.Window; w != nil {
		cut := *out.Result
		cut.TPS, cut.Transactions = w.TPS, w.Transactions
		out.Result = &cut
	}
	if len(samples) == len(pods) {
		merged, err := mergeLatency(pods, samples)
		if err != nil {
			return nil, err
		}
		out.Latency = merged
	}
	out.Unmeasured = []Unmeasured{{Part: "client", Reason: fmt.Sprintf("the load ran in %d runner pods, each "+
		"accounting its own CPU against its own cores: not added up yet", len(pods))}}
	return out, nil
}

// sumWindows is the run's figures over its pods' common window: their transactions within it added
// up; nil unless every pod cut to the same window.
func sumWindows(pods []*Report) *Window {
	first := pods[0].Window
	if first == nil {
		return nil
	}
	out := &Window{Start: first.Start, End: first.End}
	for _, p := range pods {
		w := p.Window
		if w == nil || !w.Start.Equal(first.Start) || !w.End.Equal(first.End) {
			return nil
		}
		out.Transactions += w.Transactions
		out.TPS += w.TPS
	}
	return out
}

// mergeLatency merges the pods' histograms, weighted by their sampling rates.
func mergeLatency(pods []*Report, samples []latency.Sample) (*Latency, error) {
	h, _, err := latency.MergeWeighted(samples)
	if err != nil {
		return nil, err
	}
	encoded, err := latency.Encode(h)
	if err != nil {
		return nil, err
	}
	out := &Latency{Histogram: encoded, Samples: h.TotalCount()}
	for _, p := range pods {
		out.SamplingRate = max(out.SamplingRate, p.Latency.SamplingRate)
		out.Failed += p.Latency.Failed
		out.Skipped += p.Latency.Skipped
	}
	return out, nil
}

// addWire adds a pod's bytes to the run's; a pod whose counters were not read leaves the run's
// unknown.
func addWire(total, pod *Wire, first bool) *Wire {
	if pod == nil || (total == nil && !first) {
		return nil
	}
	if total == nil {
		w := *pod
		return &w
	}
	total.ReceivedBytes += pod.ReceivedBytes
	total.SentBytes += pod.SentBytes
	total.ReceivedPackets += pod.ReceivedPackets
	total.SentPackets += pod.SentPackets
	return total
}
