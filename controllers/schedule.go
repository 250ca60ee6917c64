package controllers

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// plannedRun is one measured run of a benchmark: a round (from 1) of the transport at index
// transport in the spec.
type plannedRun struct {
	transport int
	round     int32
}

// maxSeed keeps a seed exact in JSON, whose numbers are float64 to many clients (2⁵³ − 1).
const maxSeed = 1<<53 - 1

// runSeed is the seed of a benchmark's run order: spec.load.seed, or one derived from the
// benchmark's UID, so that every benchmark gets its own order and each reconcile the same one
// without having to read it back from status.
func runSeed(tb *benchv1.TunnelBenchmark) int64 {
	if tb.Spec.Load.Seed != nil {
		return *tb.Spec.Load.Seed
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(tb.UID))
	return int64(h.Sum64() & maxSeed)
}

// schedule is the order of a benchmark's runs. Interleaved runs every transport once per round,
// each round in its own random order, so that drift on the machine falls on every transport alike,
// none always runs first or last, and round i of one transport can be paired with round i of the
// baseline; sequential runs all rounds of a transport before the next (A A A, C C C, B B B), the
// transports in a random order. Either way a transport's rounds run in order, so "round r is done"
// is "at least r rounds are recorded". The same seed gives the same order.
func schedule(transports int, rounds int32, order benchv1.RunOrder, seed int64) []plannedRun {
	out := make([]plannedRun, 0, transports*int(rounds))
	if order == benchv1.OrderSequential {
		for _, t := range permutation(transports, seed, 0) {
			for r := int32(1); r <= rounds; r++ {
				out = append(out, plannedRun{transport: t, round: r})
			}
		}
		return out
	}
	for r := int32(1); r <= rounds; r++ {
		for _, t := range permutation(transports, seed, uint64(r)) {
			out = append(out, plannedRun{transport: t, round: r})
		}
	}
	return out
}

// permutation is a random order of 0..n-1 drawn from the seed and a stream (the round): a
// Fisher–Yates shuffle of PCG's output, written out here rather than rand.Shuffle so that a
// recorded seed keeps its order across Go releases (PCG is a fixed algorithm; Shuffle's use of
// it is not promised). The modulo's bias is below 2⁻⁶⁰ for the 16 transports a spec may have.
func permutation(n int, seed int64, stream uint64) []int {
	src := rand.NewPCG(uint64(seed), stream)
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := int(src.Uint64() % uint64(i+1))
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// plannedOrder is the order the runs of tb will take, as status records it: per round the
// transports' names (one entry for a sequential benchmark).
func plannedOrder(tb *benchv1.TunnelBenchmark) *benchv1.RunOrderStatus {
	seed := runSeed(tb)
	out := &benchv1.RunOrderStatus{Order: tb.Order(), Seed: seed}
	var names []string
	round := int32(1)
	for _, p := range schedule(len(tb.Spec.Transports), tb.Repetitions(), tb.Order(), seed) {
		if tb.Order() == benchv1.OrderSequential {
			if p.round == 1 {
				names = append(names, tb.Spec.Transports[p.transport].Name)
			}
			continue
		}
		if p.round != round {
			out.Rounds, names, round = append(out.Rounds, strings.Join(names, " ")), nil, p.round
		}
		names = append(names, tb.Spec.Transports[p.transport].Name)
	}
	out.Rounds = append(out.Rounds, strings.Join(names, " "))
	return out
}

// nextRun is the first run of the schedule that has not been recorded, or false when every run
// has.
func nextRun(tb *benchv1.TunnelBenchmark) (plannedRun, bool) {
	for _, p := range schedule(len(tb.Spec.Transports), tb.Repetitions(), tb.Order(), runSeed(tb)) {
		res := tb.Status.Result(tb.Spec.Transports[p.transport].Name)
		if res == nil || res.Repetitions < p.round {
			return p, true
		}
	}
	return plannedRun{}, false
}
