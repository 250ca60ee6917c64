package benchmark

import (
	"fmt"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// The LatencyInconsistent condition is True once a closed-loop run's mean latency, as pgbench measured
// it, lies far below the time each client took per transaction (clients ÷ tps, Little's law):
// a closed loop's client spends each cycle in its transaction but for pgbench's own bookkeeping,
// so a latency under minLatencyShare of the cycle is not the path's (why pgbench times it so is
// not known yet). Seen on a
// 2-core node with pgbench and PostgreSQL saturating it (select 1 at 2 clients: 0.002 ms measured,
// 0.036 ms per cycle). The run's tps stands; its latency figures and percentiles do not.

// minLatencyShare is the least share of a closed-loop cycle pgbench's latency may take: on this
// project's runs it takes 93–97 % (docs/studies/demo.md: 0.093 ms of a 0.098 ms cycle).
const minLatencyShare = 0.7

// warnLatencyInconsistent warns of a run whose latency pgbench measured below what its throughput
// allows.
func (r *TunnelBenchmarkReconciler) warnLatencyInconsistent(tb *benchv1.TunnelBenchmark, transport string,
	run benchv1.RunResult) {
	if run.CycleMs == nil || run.LatencyAvgMs >= minLatencyShare*(*run.CycleMs) {
		return
	}
	r.warnOnce(tb, conditions.LatencyInconsistent, conditions.ReasonBelowCycle, fmt.Sprintf("run %d of transport %s: pgbench measured a "+
		"mean latency of %.3f ms, but each client took %.3f ms per transaction (clients ÷ tps): a closed loop's latency "+
		"cannot be under %.0f%% of that (seen on a saturated node; why pgbench times it so is not known yet), "+
		"so its latency and percentiles do not describe the path, while its tps does. Give the runner a node of its own "+
		"(spec.runner.affinity) or fewer clients", run.Round, transport, run.LatencyAvgMs, *run.CycleMs, 100*minLatencyShare))
}
