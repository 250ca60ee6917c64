// Package benchsim draws finished benchmarks from a model of this machine's noise, so that the
// project's statistical rules (comparing two benchmarks, judging a schedule's history) can be
// simulated with the project's own code before they are trusted.
package benchsim

import (
	"math"
	"math/rand/v2"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
)

// Transports are the names of a drawn benchmark's transports, in spec order; the first is the
// baseline.
var Transports = []string{"direct", "tls", "ssh"}

// Completed is a finished interleaved benchmark whose transports ran the rounds of tps (one slice
// per transport, in the order of Transports, at most three).
func Completed(name string, tps ...[]float64) *benchv1.TunnelBenchmark {
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: name}}
	tb.Spec.Server.CNPG = &benchv1.CNPGServer{ClusterName: "pg"}
	tb.Spec.Load = benchv1.LoadSpec{Builtin: "select-only", Clients: 4, Threads: 2,
		Duration: &metav1.Duration{Duration: 10 * time.Second}, Repetitions: int32(len(tps[0])), Seed: ptr.To[int64](int64(len(name)))}
	tb.Status.Phase, tb.Status.ServerVersion = benchv1.PhaseCompleted, "15.20"
	for i, rounds := range tps {
		name := Transports[i]
		tb.Spec.Transports = append(tb.Spec.Transports, benchv1.TransportSpec{Name: name, Type: benchv1.TransportType(name)})
		res := benchv1.TransportResult{Transport: name, Type: benchv1.TransportType(name)}
		for r, v := range rounds {
			res.Runs = append(res.Runs, benchv1.RunResult{Round: int32(r + 1), TPS: v, Transactions: int64(v * 10),
				LatencyAvgMs: 4000 / v})
		}
		res.TPS = stats.Median(rounds)
		res.LatencyAvgMs = 4000 / res.TPS
		tb.Status.Results = append(tb.Status.Results, res)
	}
	return tb
}

// Machine is a model of the noise of a benchmark's tps, each a standard deviation of its
// logarithm: Benchmark moves every run of a benchmark alike (drift between benchmarks), Round
// every run of a round, Run each run on its own, and TransportMove each transport's runs of a
// benchmark (what drifts between benchmarks for one path and not another).
type Machine struct {
	Rng                                  *rand.Rand
	Benchmark, Round, Run, TransportMove float64
}

// ThisMachine is the model fitted to this project's 2-core machine (docs/studies/reproducibility.md:
// medians move by 5–7 % between benchmarks against 3–5 % between the runs of one; TLS/direct
// moves by about 2.3 % between benchmarks beyond what its runs' spread explains), seeded.
func ThisMachine(seed uint64) Machine {
	return Machine{Rng: rand.New(rand.NewPCG(seed, 3)), Benchmark: 0.06, Round: 0.03, Run: 0.04, TransportMove: 0.023}
}

// Draw is a benchmark of transports (at most three) over rounds, whose last transport's tps is
// scaled by effect (1: no change).
func (m Machine) Draw(name string, transports, rounds int, effect float64) *benchv1.TunnelBenchmark {
	return m.DrawScaled(name, transports, rounds, func(i int) float64 {
		if i == transports-1 {
			return effect
		}
		return 1
	})
}

// DrawScaled is Draw with each transport i's tps scaled by scale(i).
func (m Machine) DrawScaled(name string, transports, rounds int, scale func(int) float64) *benchv1.TunnelBenchmark {
	d := m.Rng.NormFloat64() * m.Benchmark
	moves := make([]float64, transports)
	for i := range moves {
		moves[i] = m.Rng.NormFloat64() * m.TransportMove
	}
	tps := make([][]float64, transports)
	for range rounds {
		round := m.Rng.NormFloat64() * m.Round
		for i := range transports {
			tps[i] = append(tps[i], 1000*math.Exp(d+round+moves[i]+math.Log(scale(i))+m.Rng.NormFloat64()*m.Run))
		}
	}
	return Completed(name, tps...)
}

// Timed gives a completed benchmark's runs their times and their own error, as the operator
// records them: round by round, each transport's run its load's length
// (spec.load.duration, 10 s when unset) with MeanErrorPercent errorPercent, the next starting gap
// after it.
func Timed(tb *benchv1.TunnelBenchmark, errorPercent float64, gap time.Duration) {
	length := 10 * time.Second
	if tb.Spec.Load.Duration != nil {
		length = tb.Spec.Load.Duration.Duration
	}
	start := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	for round := int32(1); round <= tb.Spec.Load.Repetitions; round++ {
		for i := range tb.Status.Results {
			for j := range tb.Status.Results[i].Runs {
				r := &tb.Status.Results[i].Runs[j]
				if r.Round != round {
					continue
				}
				r.Steadiness = &benchv1.Steadiness{Steady: true, MeanErrorPercent: ptr.To(errorPercent)}
				end := start.Add(length)
				r.StartTime, r.EndTime = ptr.To(metav1.NewTime(start)), ptr.To(metav1.NewTime(end))
				start = end.Add(gap)
			}
		}
	}
}
