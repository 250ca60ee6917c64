// Package runorder is the order in which a benchmark's runs are made: interleaved rounds, each in
// its own random order drawn from a recorded seed, or sequential; which run comes next, from what
// status already recorded; and the order as status shows it. Pure: tested without an API server.
package runorder

import (
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// Run is one measured run of a benchmark: a round (from 1) of the transport at index Transport in
// the spec, at the sweep's point at index Point (0 without a sweep).
type Run struct {
	Transport int
	Point     int
	Round     int32
}

// Ref addresses the run by the transport's name: how Jobs, result ConfigMaps and status find it.
func (p Run) Ref(tb *benchv1.TunnelBenchmark) benchv1.RunRef {
	return benchv1.RunRef{Transport: tb.Spec.Transports[p.Transport].Name, Point: p.Point, Round: p.Round}
}

// maxSeed keeps a seed exact in JSON, whose numbers are float64 to many clients (2⁵³ − 1).
const maxSeed = 1<<53 - 1

// Seed is the seed of a benchmark's run order: spec.load.seed, or one derived from the
// benchmark's UID, so that every benchmark gets its own order and each reconcile the same one
// without having to read it back from status.
func Seed(tb *benchv1.TunnelBenchmark) int64 {
	if tb.Spec.Load.Seed != nil {
		return *tb.Spec.Load.Seed
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(tb.UID))
	return int64(h.Sum64() & maxSeed)
}

// Order is the order of a benchmark's runs. Interleaved runs every (point, transport) once per
// round, each round in its own random order, so that drift on the machine falls on every
// transport and point alike, none always runs first or last, and round i of one transport can be
// paired with round i of the baseline (and of the previous point); sequential runs all rounds of
// one (point, transport) before the next (A A A, C C C, B B B), in a random order. Either way a
// transport's rounds at a point run in order, so "round r is done" is "at least r rounds are
// recorded". The same seed gives the same order; without a sweep (one point) the order is the
// one a benchmark before sweeps had.
func Order(points, transports int, rounds int32, order benchv1.RunOrder, seed int64) []Run {
	units := points * transports
	out := make([]Run, 0, units*int(rounds))
	run := func(unit int, round int32) Run {
		return Run{Transport: unit % transports, Point: unit / transports, Round: round}
	}
	if order == benchv1.OrderSequential {
		for _, u := range permutation(units, seed, 0) {
			for r := int32(1); r <= rounds; r++ {
				out = append(out, run(u, r))
			}
		}
		return out
	}
	for r := int32(1); r <= rounds; r++ {
		for _, u := range permutation(units, seed, uint64(r)) {
			out = append(out, run(u, r))
		}
	}
	return out
}

// Of is tb's run order, over its rounds (fewer than the repetitions once a precision target
// stopped it).
func Of(tb *benchv1.TunnelBenchmark) []Run {
	return Order(tb.Points(), len(tb.Spec.Transports), tb.Rounds(), tb.Order(), Seed(tb))
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

// Planned is the order the runs of tb will take, as status records it: per round the
// transports' names, with their point's value in a sweep ("ssh@4"); one entry for a sequential
// benchmark.
func Planned(tb *benchv1.TunnelBenchmark) *benchv1.RunOrderStatus {
	out := &benchv1.RunOrderStatus{Order: tb.Order(), Seed: Seed(tb)}
	_, values := tb.Spec.Sweep.Parameter()
	var names []string
	round := int32(1)
	for _, p := range Of(tb) {
		if tb.Order() == benchv1.OrderSequential && p.Round != 1 {
			continue
		}
		if p.Round != round {
			out.Rounds, names, round = append(out.Rounds, strings.Join(names, " ")), nil, p.Round
		}
		name := tb.Spec.Transports[p.Transport].Name
		if len(values) > 0 {
			name += "@" + strconv.Itoa(int(values[p.Point]))
		}
		names = append(names, name)
	}
	out.Rounds = append(out.Rounds, strings.Join(names, " "))
	return out
}

// Next is the first run of the run order that has not been recorded, or false when every run
// has.
func Next(tb *benchv1.TunnelBenchmark) (Run, bool) {
	for _, p := range Of(tb) {
		res := benchv1.FindResult(tb.ResultsAt(p.Point), tb.Spec.Transports[p.Transport].Name)
		if res == nil || res.Repetitions < p.Round {
			return p, true
		}
	}
	return Run{}, false
}
