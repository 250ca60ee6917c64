// Package precision is a precision target's rule (when a comparison meets its goal) and its
// planner (how many rounds a target takes on paths like an earlier benchmark's). The reconciler's
// summary stops a benchmark by Settled; the planner simulates the same rule on the same
// sequential design (internal/analysis/stats), so that a plan and a run agree. Pure.
package precision

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
)

// HalfWidth is an interval's half-width as a fraction: [low, high] is its geometric centre ×÷
// (1 + HalfWidth).
func HalfWidth(low, high float64) float64 {
	return math.Sqrt(high/low) - 1
}

// Settled reports whether a comparison with the verdict and the interval [low, high] meets the
// target: within ±halfWidthPercent for goal halfWidth; for goal decide, faster or slower, or,
// with minEffectPercent, an interval within that of the baseline.
func Settled(target *benchv1.PrecisionTarget, verdict benchv1.Verdict, low, high float64) bool {
	if target.Goal == benchv1.PrecisionHalfWidth {
		return target.HalfWidthPercent != nil && HalfWidth(low, high) <= float64(*target.HalfWidthPercent)/100
	}
	if verdict == benchv1.VerdictFaster || verdict == benchv1.VerdictSlower {
		return true
	}
	if target.MinEffectPercent == nil {
		return false
	}
	theta := float64(*target.MinEffectPercent) / 100
	return low >= 1-theta && high <= 1/(1-theta)
}

// Path is what an earlier benchmark measured of one transport against the baseline: the mean and
// the standard deviation of its paired per-round log-ratios, over Pairs rounds.
type Path struct {
	Transport string
	LogMean   float64
	LogSD     float64
	Pairs     int
	// Within is the part of LogSD² that is the runs' own noise (both runs of a pair, from their
	// progress reports), at runs of Seconds of load; 0 when the runs do not carry it.
	Within  float64
	Seconds float64
	// DF are the degrees of freedom LogSD was estimated with (the rounds less one, summed over
	// pooled pilots): how far the plan may trust it. 0 takes the path as known.
	DF int
}

// Pilot reads, from a completed benchmark, each transport's paired log-ratios to the baseline
// (its spec's first transport): what a plan of the same paths draws its rounds from. A transport
// with fewer than two pairs tells nothing of the spread and is left out. Where every pair's runs
// carry their own error (RunResult.Steadiness.MeanErrorPercent), the path says how much of its
// spread that is.
func Pilot(tb *benchv1.TunnelBenchmark) []Path {
	baseline := tb.Status.Result(tb.Spec.Transports[0].Name)
	if baseline == nil {
		return nil
	}
	var out []Path
	for _, t := range tb.Spec.Transports[1:] {
		res := tb.Status.Result(t.Name)
		if res == nil {
			continue
		}
		b, c := benchv1.PairedFigures(baseline, res)
		if len(b) < 2 {
			continue
		}
		r, err := stats.PairedRatio(b, c)
		if err != nil {
			continue
		}
		p := Path{Transport: t.Name, LogMean: r.LogMean, LogSD: r.LogSE * math.Sqrt(float64(r.N)), Pairs: r.N, DF: r.N - 1}
		if within, ok := pairsWithin(baseline, res); ok && tb.Spec.Load.Duration != nil {
			p.Within, p.Seconds = within, tb.Spec.Load.Duration.Seconds()
		}
		out = append(out, p)
	}
	return out
}

// Planned is what a precision target is expected to take on paths like a pilot's.
type Planned struct {
	// Median and P90 are the rounds after which the simulated benchmarks stopped, MeanRounds
	// their mean.
	Median, P90 int
	MeanRounds  float64
	// Met is the share of them that met the goal within the bound.
	Met float64
	// Trials is how many benchmarks were simulated.
	Trials int
}

// Trials is how many benchmarks Plan simulates: the share that met the goal is then known within
// about ±1.5 %.
const Trials = 1000

// Plan simulates a benchmark of target within bound rounds whose transports (after the baseline)
// are paths, each round's log-ratio to the baseline normal with its path's mean and spread: after
// every round from stats.FirstLook, the design's repeated intervals adjusted across the
// transports (stats.HolmSequential) and Settled, as the reconciler's summary stops a benchmark.
// A path estimated from a pilot's few rounds (DF) is redrawn for every simulated benchmark as
// plausible as those rounds allow (Path.drawn): the plan is the predictive one, not the plan of
// the pilot's point estimate.
func Plan(target *benchv1.PrecisionTarget, bound int, paths []Path, seed uint64) Planned {
	return simulate(target, bound, paths, 0, seed)
}

// drawn is a path as plausible as the pilot's rounds allow: its per-round variance drawn from
// the scaled inverse χ² of its DF (a normal variance's posterior under the reference prior,
// Gelman et al., Bayesian Data Analysis, §3.2), of which the runs' own noise is taken as measured
// and the rest is drift; its mean from a normal of its standard error. Three rounds (DF 2) leave
// the spread uncertain by far more than half, with a long tail: the plans say so.
func (p Path) drawn(rng *rand.Rand) Path {
	if p.DF < 1 {
		return p
	}
	chi := 0.0
	for range p.DF {
		z := rng.NormFloat64()
		chi += z * z
	}
	variance := p.LogSD * p.LogSD * float64(p.DF) / max(chi, 1e-12)
	q := p
	q.LogSD = math.Sqrt(max(variance-p.Within, 0) + p.Within)
	q.LogMean += math.Sqrt(variance/float64(max(p.Pairs, 1))) * rng.NormFloat64()
	return q
}

// simulate is Plan at runs of seconds (Path.At; 0 for the paths' own length).
func simulate(target *benchv1.PrecisionTarget, bound int, paths []Path, seconds float64, seed uint64) Planned {
	rng := rand.New(rand.NewPCG(seed, 5))
	design := stats.Sequential{Rounds: bound}
	rounds := make([]int, 0, Trials)
	met := 0
	base := make([]float64, bound)
	for i := range base {
		base[i] = 1
	}
	for range Trials {
		cand := make([][]float64, len(paths))
		drawn := make([]Path, len(paths))
		for i, p := range paths {
			drawn[i] = p.drawn(rng).At(seconds)
		}
		stopped := bound
		for k := 1; k <= bound; k++ {
			for i, p := range drawn {
				cand[i] = append(cand[i], math.Exp(p.LogMean+p.LogSD*rng.NormFloat64()))
			}
			if k < stats.FirstLook {
				continue
			}
			family := make([]stats.SequentialRatio, len(paths))
			for i := range paths {
				family[i], _ = stats.PairedSequential(design, base[:k], cand[i])
			}
			all := true
			for _, r := range stats.HolmSequential(family) {
				all = all && r.HasInterval && Settled(target, benchv1.Verdict(r.Verdict()), r.Low, r.High)
			}
			if all {
				stopped = k
				met++
				break
			}
		}
		rounds = append(rounds, stopped)
	}
	slices.Sort(rounds)
	sum := 0
	for _, r := range rounds {
		sum += r
	}
	return Planned{Median: rounds[len(rounds)/2], P90: rounds[len(rounds)*9/10], MeanRounds: float64(sum) / Trials,
		Met: float64(met) / Trials, Trials: Trials}
}

// String says the plan in words.
func (p Planned) String() string {
	return fmt.Sprintf("%d rounds (the median of %d simulated benchmarks; 90 %% within %d), the goal met within the bound in %.0f %%",
		p.Median, p.Trials, p.P90, 100*p.Met)
}
