package engine

import (
	"math"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// Share is one process's part of a load split across load generator processes that run at once.
type Share struct {
	Clients, Threads int
}

// Split divides clients and threads as evenly as possible across n processes (like a study's
// 8 × `-c 2`), giving every process at least one client and one thread and never more threads
// than clients.
func Split(clients, threads, n int) []Share {
	shares := make([]Share, n)
	for i := range shares {
		shares[i].Clients = clients / n
		if i < clients%n {
			shares[i].Clients++
		}
		shares[i].Threads = threads / n
		if i < threads%n {
			shares[i].Threads++
		}
		shares[i].Clients = max(shares[i].Clients, 1)
		shares[i].Threads = min(max(shares[i].Threads, 1), shares[i].Clients)
	}
	return shares
}

// SplitLoad returns the loads of n load generator processes that run at the same moment (one per
// SSH tunnel, or one per runner pod): copies of load, each with its share of the clients and threads (Split) and of the rate
// in proportion to its clients.
func SplitLoad(load runspec.Load, n int) []runspec.Load {
	if n <= 1 {
		return []runspec.Load{load}
	}
	out := make([]runspec.Load, 0, n)
	for _, share := range Split(max(load.Clients, 1), max(load.Threads, 1), n) {
		l := load
		l.Clients, l.Threads = share.Clients, share.Threads
		if load.Rate > 0 {
			l.Rate = load.Rate * float64(share.Clients) / float64(max(load.Clients, 1))
		}
		out = append(out, l)
	}
	return out
}

// Aggregate combines the results of load generator processes that ran at the same time: tps, transactions
// and failures are summed; latencies are averaged weighted by transactions, and the standard
// deviation is the pooled one (within- and between-process variance); connection times are
// averaged weighted by clients; the duration is the longest.
func Aggregate(parts []*Result) *Result {
	if len(parts) == 1 {
		return parts[0]
	}
	out := &Result{}
	var n, sumLat, sumSq, connWeighted float64
	stddevKnown, inclKnown := true, true
	var incl float64
	for _, p := range parts {
		out.TPS += p.TPS
		out.Transactions += p.Transactions
		out.FailedTransactions += p.FailedTransactions
		out.Clients += p.Clients
		out.Threads += p.Threads
		out.Reconnect = out.Reconnect || p.Reconnect
		w := float64(p.Transactions)
		n += w
		sumLat += w * p.LatencyAvgMs
		if p.LatencyStddevMs == nil {
			stddevKnown = false
		} else {
			sumSq += w * (*p.LatencyStddevMs**p.LatencyStddevMs + p.LatencyAvgMs*p.LatencyAvgMs)
		}
		if p.TPSIncludingConnections == nil {
			inclKnown = false
		} else {
			incl += *p.TPSIncludingConnections
		}
		connWeighted += float64(p.Clients) * p.ConnectionTimeMs
		if p.DurationSeconds != nil && (out.DurationSeconds == nil || *p.DurationSeconds > *out.DurationSeconds) {
			out.DurationSeconds = ptr(*p.DurationSeconds)
		}
	}
	if n > 0 {
		out.LatencyAvgMs = sumLat / n
		if stddevKnown {
			out.LatencyStddevMs = ptr(math.Sqrt(max(sumSq/n-out.LatencyAvgMs*out.LatencyAvgMs, 0)))
		}
	}
	if inclKnown {
		out.TPSIncludingConnections = ptr(incl)
	}
	if out.Clients > 0 {
		out.ConnectionTimeMs = connWeighted / float64(out.Clients)
	}
	out.Progress = sumProgress(parts)
	out.OpenLoop = sumOpenLoop(parts)
	for _, p := range parts {
		out.SerializationFailures = addCount(out.SerializationFailures, p.SerializationFailures)
		out.DeadlockFailures = addCount(out.DeadlockFailures, p.DeadlockFailures)
	}
	return out
}

// addCount adds a process's count to the sum so far; a count no process reported stays nil.
func addCount(sum, n *int64) *int64 {
	if n == nil {
		return sum
	}
	return ptr(ptrValue(sum) + *n)
}

// sumOpenLoop adds up the schedules of processes that ran at the same time: skipped and late
// transactions add, the mean lag is weighted by transactions, the longest lag is the longest.
func sumOpenLoop(parts []*Result) *OpenLoop {
	var out *OpenLoop
	var n, lag float64
	for _, p := range parts {
		o := p.OpenLoop
		if o == nil {
			continue
		}
		if out == nil {
			out = &OpenLoop{}
		}
		out.Skipped += o.Skipped
		out.LagMaxMs = max(out.LagMaxMs, o.LagMaxMs)
		out.Late = addCount(out.Late, o.Late)
		n += float64(p.Transactions)
		lag += float64(p.Transactions) * o.LagAvgMs
	}
	if out != nil && n > 0 {
		out.LagAvgMs = lag / n
	}
	return out
}

func ptrValue(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// sumProgress adds up the progress reports of processes that ran at the same time, interval by
// interval: their tps add, and the latency is the mean weighted by each one's tps. Intervals that
// not every process reported (one ended a little earlier) are left out.
func sumProgress(parts []*Result) []ProgressPoint {
	n := len(parts[0].Progress)
	for _, p := range parts {
		n = min(n, len(p.Progress))
	}
	out := make([]ProgressPoint, n)
	for i := range n {
		var weighted float64
		for _, p := range parts {
			pt := p.Progress[i]
			out[i].T = max(out[i].T, pt.T)
			out[i].TPS += pt.TPS
			weighted += pt.TPS * pt.LatencyMs
		}
		if out[i].TPS > 0 {
			out[i].LatencyMs = weighted / out[i].TPS
		}
	}
	return out
}

// Downsample merges consecutive progress points so that at most maxPoints remain: each group of k
// equal intervals becomes one, at the group's last time, whose tps is the group's mean (the tps of
// the longer interval) and whose latency is the mean weighted by tps. Real figures, averaged over
// longer intervals; none invented.
func Downsample(points []ProgressPoint, maxPoints int) []ProgressPoint {
	if maxPoints <= 0 || len(points) <= maxPoints {
		return points
	}
	k := (len(points) + maxPoints - 1) / maxPoints
	out := make([]ProgressPoint, 0, maxPoints)
	for start := 0; start < len(points); start += k {
		group := points[start:min(start+k, len(points))]
		var tps, weighted float64
		for _, p := range group {
			tps += p.TPS
			weighted += p.TPS * p.LatencyMs
		}
		pt := ProgressPoint{T: group[len(group)-1].T, TPS: tps / float64(len(group))}
		if tps > 0 {
			pt.LatencyMs = weighted / tps
		}
		out = append(out, pt)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
