package precision

import (
	"fmt"
	"math"
	"slices"
	"time"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
)

// Where a comparison's noise sits, and what that says of run length against rounds.
//
// A round's log-ratio varies for two reasons: each run's own noise (its progress reports scatter,
// and a run of T seconds averages them down at 1/√T), and drift between rounds (the machine, the
// caches, the neighbours) that no run length removes. Kalibera & Jones ("Rigorous Benchmarking in
// Reasonable Time", ISMM 2013, §3) put repetitions where the variance is: with a fixed cost c of
// starting a run, a run's own variance w₁/T per second of load and the rounds' variance b, the
// time to a given precision, (b + w₁/T)(c + T), is least at T* = √(c·w₁/b). The planner does not
// trust the formula alone: it simulates the stopping rule at each candidate length and keeps the
// length whose benchmarks settle soonest (BestLength).

// between is the part of a path's per-round variance that longer runs do not remove.
func (p Path) between() float64 {
	return max(p.LogSD*p.LogSD-p.Within, 0)
}

// At is the path as runs of seconds would measure it: its drift between rounds as measured, its
// runs' own noise scaled by their length. A path whose runs carry no error of their own is
// returned as it is.
func (p Path) At(seconds float64) Path {
	if p.Seconds <= 0 || seconds <= 0 || p.Within == 0 {
		return p
	}
	within := p.Within * p.Seconds / seconds
	p.LogSD, p.Within, p.Seconds = math.Sqrt(p.between()+within), within, seconds
	return p
}

// WithinShare is the share of the path's per-round variance that is its runs' own noise.
func (p Path) WithinShare() float64 {
	if p.LogSD == 0 {
		return 0
	}
	return min(p.Within/(p.LogSD*p.LogSD), 1)
}

// withinOf is the variance of a pair's log-ratio that its two runs' own noise puts on it, and
// whether both runs carry it: their tps from progress reports (a copy's or an open loop's figure
// is not what the reports measure).
func withinOf(a, b benchv1.RunResult) (float64, bool) {
	var v float64
	for _, r := range []benchv1.RunResult{a, b} {
		if r.Steadiness == nil || r.Steadiness.MeanErrorPercent == nil || r.MBPerSecond != nil || r.OpenLoop != nil {
			return 0, false
		}
		e := *r.Steadiness.MeanErrorPercent / 100
		v += e * e
	}
	return v, true
}

// pairsWithin is the mean within-run variance over the rounds both transports ran and counted;
// ok is false unless every such pair carries it.
func pairsWithin(a, b *benchv1.TransportResult) (float64, bool) {
	var sum float64
	n := 0
	for _, ra := range a.Runs {
		for _, rb := range b.Runs {
			if ra.Round != rb.Round || !ra.Counted() || !rb.Counted() {
				continue
			}
			v, ok := withinOf(ra, rb)
			if !ok {
				return 0, false
			}
			sum, n = sum+v, n+1
		}
	}
	return sum / float64(max(n, 1)), n > 0
}

// RunOverhead is what a run costs besides its load, as the benchmark measured it: the median gap
// between one run's end and the next one's start (its Job and pod started, its connections
// opened, its warm-up run). ok is false with fewer than two timed runs.
func RunOverhead(tb *benchv1.TunnelBenchmark) (time.Duration, bool) {
	var runs []benchv1.RunResult
	for _, res := range tb.Status.Results {
		for _, r := range res.Runs {
			if r.StartTime != nil && r.EndTime != nil {
				runs = append(runs, r)
			}
		}
	}
	slices.SortFunc(runs, func(a, b benchv1.RunResult) int { return a.StartTime.Compare(b.StartTime.Time) })
	var gaps []float64
	for i := 1; i < len(runs); i++ {
		if gap := runs[i].StartTime.Sub(runs[i-1].EndTime.Time); gap >= 0 {
			gaps = append(gaps, gap.Seconds())
		}
	}
	if len(gaps) == 0 {
		return 0, false
	}
	return time.Duration(stats.Median(gaps) * float64(time.Second)), true
}

// Pool joins what several pilots measured of each transport into one path: the log-ratio's mean
// weighted by their rounds, the drift between rounds pooled over their degrees of freedom (which
// the path keeps: the plan's trust in it), the
// runs' own noise per second of load averaged (pilots of different lengths join this way), at
// runs of seconds. The order of the transports is the first pilot's, then any new ones.
func Pool(pilots [][]Path, seconds float64) []Path {
	type sums struct {
		mean, between, withinPerSecond float64
		pairs, df, timed               int
	}
	var order []string
	by := map[string]*sums{}
	for _, paths := range pilots {
		for _, p := range paths {
			s := by[p.Transport]
			if s == nil {
				s = &sums{}
				by[p.Transport] = s
				order = append(order, p.Transport)
			}
			s.mean += float64(p.Pairs) * p.LogMean
			s.pairs += p.Pairs
			s.between += float64(p.DF) * p.between()
			s.df += p.DF
			if p.Within > 0 && p.Seconds > 0 {
				s.withinPerSecond += p.Within * p.Seconds
				s.timed++
			}
		}
	}
	out := make([]Path, 0, len(order))
	for _, name := range order {
		s := by[name]
		p := Path{Transport: name, LogMean: s.mean / float64(s.pairs), Pairs: s.pairs, Seconds: seconds, DF: s.df}
		between := s.between / float64(max(s.df, 1))
		if s.timed > 0 {
			p.Within = s.withinPerSecond / float64(s.timed) / seconds
		}
		p.LogSD = math.Sqrt(between + p.Within)
		out = append(out, p)
	}
	return out
}

// Lengths are the run lengths BestLength weighs, in seconds, besides the manifest's own.
var Lengths = []float64{5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300}

// Length is a plan at one run length: its rounds, and what they cost with runs runs a round each
// costing overhead besides its load.
type Length struct {
	Seconds float64
	Planned Planned
	// Time is the median rounds' time.
	Time time.Duration
	// PerAnswer is the mean time of the simulated benchmarks over the share that met the goal:
	// what an answer costs, counting the benchmarks that ran to the bound without one (a
	// renewal argument: run again until one meets it). Infinite when none did.
	PerAnswer time.Duration
}

// BestLength simulates the target at each of Lengths and at current seconds (the manifest's) on
// paths rescaled to that length (Path.At, after each simulated benchmark's redraw of them), and
// returns the plan at current and the one whose answer costs least (Length.PerAnswer): neither
// the fewest rounds (longer runs) nor the least time (shorter runs reach the bound sooner without
// an answer) alone. A length is advised only when its answer costs a tenth less than current's.
// Without the runs' own noise measured (no Path.Within), run length cannot be weighed: best is
// the current plan. Kalibera & Jones's T* = √(c·w₁/b) is the same optimum for a fixed number of
// rounds; the simulation adds the bound, the looks and the pilot's uncertainty.
func BestLength(target *benchv1.PrecisionTarget, bound int, paths []Path, runs int, overhead time.Duration,
	current float64) (at, best Length) {
	weighed := false
	for _, p := range paths {
		weighed = weighed || p.Within > 0
	}
	plan := func(seconds float64) Length {
		pl := simulate(target, bound, paths, seconds, 1)
		round := time.Duration(runs) * (overhead + time.Duration(seconds*float64(time.Second)))
		l := Length{Seconds: seconds, Planned: pl, Time: time.Duration(pl.Median) * round, PerAnswer: time.Duration(math.MaxInt64)}
		if pl.Met > 0 {
			l.PerAnswer = time.Duration(pl.MeanRounds / pl.Met * float64(round))
		}
		return l
	}
	at = plan(current)
	best = at
	if !weighed {
		return at, best
	}
	for _, s := range Lengths {
		if c := plan(s); s != current && c.PerAnswer < best.PerAnswer {
			best = c
		}
	}
	if best.PerAnswer > at.PerAnswer/10*9 {
		best = at
	}
	return at, best
}

// Components says where a path's noise sits, in words.
func (p Path) Components() string {
	if p.Within == 0 {
		return "its runs carry no error of their own (no progress reports): run length cannot be weighed against rounds"
	}
	length := time.Duration(p.Seconds * float64(time.Second))
	if p.Within >= p.LogSD*p.LogSD {
		return fmt.Sprintf("its runs' own noise (%.1f %% a pair at %s a run) is all of it and more: no drift between rounds "+
			"can be told from %d rounds", 100*math.Sqrt(p.Within), length, p.Pairs)
	}
	return fmt.Sprintf("%.0f %% of it within the runs (at %s a run), %.0f %% drift between rounds", 100*p.WithinShare(),
		length, 100*(1-p.WithinShare()))
}
