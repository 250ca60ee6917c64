package controllers

import benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"

// plannedRun is one measured run of a benchmark: a round (from 1) of the transport at index
// transport in the spec.
type plannedRun struct {
	transport int
	round     int32
}

// schedule is the order of a benchmark's runs. Interleaved runs every transport once per round
// (A B C, A B C, ...), so that drift on the machine falls on every transport alike and round i of
// one transport can be paired with round i of the baseline; sequential runs all rounds of a
// transport before the next (A A A, B B B, ...). Either way a transport's rounds run in order, so
// "round r is done" is "at least r rounds are recorded".
func schedule(transports int, rounds int32, order benchv1.RunOrder) []plannedRun {
	out := make([]plannedRun, 0, transports*int(rounds))
	if order == benchv1.OrderSequential {
		for t := range transports {
			for r := int32(1); r <= rounds; r++ {
				out = append(out, plannedRun{transport: t, round: r})
			}
		}
		return out
	}
	for r := int32(1); r <= rounds; r++ {
		for t := range transports {
			out = append(out, plannedRun{transport: t, round: r})
		}
	}
	return out
}

// nextRun is the first run of the schedule that has not been recorded, or false when every run
// has.
func nextRun(tb *benchv1.TunnelBenchmark) (plannedRun, bool) {
	for _, p := range schedule(len(tb.Spec.Transports), tb.Repetitions(), tb.Order()) {
		res := tb.Status.Result(tb.Spec.Transports[p.transport].Name)
		if res == nil || res.Repetitions < p.round {
			return p, true
		}
	}
	return plannedRun{}, false
}
