package pgbench

import "math"

// Share is one process's part of a load split across parallel pgbench processes.
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

// Aggregate combines the results of pgbench processes that ran at the same time: tps, transactions
// and failures are summed; latencies are averaged weighted by transactions, and the standard
// deviation is the pooled one (within- and between-process variance); connection times are
// averaged weighted by clients; the duration is the longest.
func Aggregate(parts []*Result) *Result {
	if len(parts) == 1 {
		return parts[0]
	}
	out := &Result{Progress: []ProgressPoint{}}
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
	return out
}
