package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// A sequential benchmark looks at its comparisons after every round and stops as soon as they
// answer the question it was given (a precision, or a verdict for every transport). Reading a 95 %
// interval after every round and stopping at the first that excludes 1 would claim a difference
// far more often than 5 % of the time: each look is another chance for noise to cross the line.
// This file keeps the stated error rate despite the looks, with the repeated confidence intervals
// of a group sequential design (Jennison & Turnbull (1989), "Interim analyses: the repeated
// confidence interval approach", JRSS B 51(3); Jennison & Turnbull (2000), Group Sequential
// Methods with Applications to Clinical Trials, chapter 9): at every look k the paired t interval
// is drawn at one nominal level 1−ν, the same at every look as in Pocock's design (Pocock (1977),
// "Group sequential methods in the design and analysis of clinical trials", Biometrika 64(2)), and
// ν is chosen so that the chance of any look's interval missing the true ratio, over all the looks
// the bound allows, is the family's α. The intervals then cover the truth together with 1−α
// whatever rule decides when to stop, so the interval at the stop (the intersection of every
// look's, which covers whenever they all do) and the verdict read off it keep their 95 %.
//
// Pocock's constant level spends the error evenly over the looks, so that a clear difference is
// called at the first look; the price is an interval at the bound wider than a fixed design's of
// the same rounds (the level at each look is ν, not α). O'Brien & Fleming's shape would keep the
// last look near α but make an early stop rare, and early stopping is what a target is for.
//
// ν is not taken from the normal approximation of the textbooks' tables: with 3 to 20 rounds the
// t statistics' degrees of freedom change from look to look, and their joint law is what matters.
// It is the same for every true ratio and spread (the pivot (mean−μ)/se does not depend on them),
// so it is calibrated once by simulating normal log-ratios (sequentialPaths of them, seeded) and
// kept as a table, nominalLevels, that TestSequentialTable recomputes.

// FirstLook is the round after which a sequential comparison first looks: the first with two
// degrees of freedom. After two rounds Student's t is 12.7 at 95 % and far more at a sequential
// level, so a look there spends error and almost never decides.
const FirstLook = 3

// MaxRounds is the most rounds a sequential design covers (spec.load.repetitions' maximum).
const MaxRounds = 20

// MaxFamily is the largest family of comparisons the design covers: every transport of a
// benchmark (at most 16) against the first.
const MaxFamily = 15

// Sequential is the design of a benchmark that looks after every round from FirstLook to Rounds,
// its bound.
type Sequential struct {
	Rounds int
}

// Nominal is the level ν at which each look's interval is drawn so that, over the design's looks,
// the chance that any of them misses the true ratio is alpha; alpha must be FamilyAlpha/j for a
// family step j (1 to MaxFamily), the levels Holm tests at. With a single look (a bound of
// FirstLook rounds) it is alpha itself.
func (s Sequential) Nominal(alpha float64) float64 {
	k := min(max(s.Rounds, FirstLook), MaxRounds)
	j := int(math.Round(FamilyAlpha / alpha))
	if j < 1 || j > MaxFamily {
		return math.NaN()
	}
	return nominalLevels[k-FirstLook][j-1]
}

// Look is one look at a paired comparison: after Round rounds, the mean log-ratio of the first
// Round pairs, its standard error and its degrees of freedom.
type Look struct {
	Round   int
	LogMean float64
	LogSE   float64
	DF      int
}

// pValue is the look's two-sided p-value against no difference.
func (l Look) pValue() float64 {
	return Ratio{LogMean: l.LogMean, LogSE: l.LogSE, DF: l.DF}.pValue(0)
}

// halfWidth is the look's interval's half-width, in log space, at the nominal level nu.
func (l Look) halfWidth(nu float64) float64 {
	return TQuantile(1-nu/2, l.DF) * l.LogSE
}

// SequentialRatio is a paired ratio looked at after every round from FirstLook on.
type SequentialRatio struct {
	// Ratio is the comparison at the latest look: its estimate over every pair, and the interval
	// of the design at the family's level (every look's intersected), with Level the family's
	// coverage. Without a look (fewer than FirstLook pairs) it has no interval.
	Ratio
	// Looks are the looks so far, in order.
	Looks []Look
	// Nominal is the level each look's interval was drawn at (ν), 0 before the first look.
	Nominal float64
	// Design is the design the looks belong to.
	Design Sequential
}

// PairedSequential is PairedRatio looked at after every round of design: the looks of the first
// FirstLook, FirstLook+1, … pairs of baseline and candidate, and their repeated interval at the
// family's level FamilyAlpha (HolmSequential adjusts a family).
func PairedSequential(design Sequential, baseline, candidate []float64) (SequentialRatio, error) {
	whole, err := PairedRatio(baseline, candidate)
	if err != nil {
		return SequentialRatio{}, err
	}
	out := SequentialRatio{Ratio: whole, Design: design}
	out.HasInterval, out.Low, out.High = false, 0, 0
	for k := FirstLook; k <= len(baseline) && k <= design.Rounds; k++ {
		r, _ := PairedRatio(baseline[:k], candidate[:k])
		out.Looks = append(out.Looks, Look{Round: k, LogMean: r.LogMean, LogSE: r.LogSE, DF: r.DF})
	}
	return out.at(FamilyAlpha), nil
}

// minP is the smallest p-value of the looks: the comparison's evidence against no difference,
// which the design's level turns into a verdict (a look rejects at level ν when its p ≤ ν).
func (r SequentialRatio) minP() float64 {
	p := 1.0
	for _, l := range r.Looks {
		p = min(p, l.pValue())
	}
	return p
}

// at is r with its repeated interval at the family level alpha: every look's interval at the
// design's nominal level for alpha, intersected. The intersection is empty only when two looks
// exclude each other, which the design allows with a chance below alpha; the latest look's
// interval is then kept alone.
func (r SequentialRatio) at(alpha float64) SequentialRatio {
	if len(r.Looks) == 0 {
		return r
	}
	nu := r.Design.Nominal(alpha)
	low, high := math.Inf(-1), math.Inf(1)
	for _, l := range r.Looks {
		h := l.halfWidth(nu)
		low, high = max(low, l.LogMean-h), min(high, l.LogMean+h)
	}
	if low > high {
		last := r.Looks[len(r.Looks)-1]
		h := last.halfWidth(nu)
		low, high = last.LogMean-h, last.LogMean+h
	}
	r.HasInterval, r.Low, r.High, r.Level, r.Nominal = true, math.Exp(low), math.Exp(high), 1-alpha, nu
	return r
}

// HalfWidth is the interval's half-width as a fraction: the interval is the ratio's geometric
// centre ×÷ (1 + HalfWidth). Infinite without an interval.
func (r SequentialRatio) HalfWidth() float64 {
	if !r.HasInterval {
		return math.Inf(1)
	}
	return math.Sqrt(r.High/r.Low) - 1
}

// Reason says why the verdict came out as it did, and that the interval is the design's.
func (r SequentialRatio) Reason() string {
	if len(r.Looks) == 0 {
		return fmt.Sprintf("sequential: no interval before the first look, after round %d (%d so far)", FirstLook, r.N)
	}
	adjusted := ""
	if r.Level != 1-FamilyAlpha {
		adjusted = ", Holm-adjusted across the transports"
	}
	return fmt.Sprintf("%s%% repeated interval [%.3f, %.3f] over %d repetitions %s (sequential: %d looks of at most %d, "+
		"each at %s%%%s)", pct(r.Level), r.Low, r.High, r.N, r.where(), len(r.Looks), r.Design.Rounds-FirstLook+1,
		pct(1-r.Nominal), adjusted)
}

func pct(level float64) string {
	return strconv.FormatFloat(100*level, 'g', 4, 64)
}

// HolmSequential is Holm's step-down procedure (Holm) for a family of sequential comparisons of
// one design: ordered by their smallest p-value over the looks, the s-th (from 0) of m is tested
// at the family level FamilyAlpha/(m−s), which the design turns into its nominal level, until the
// first that is not rejected. Each comparison's interval is redrawn at the level of its step, so
// that its verdict is still read off its interval. Comparisons without a look take no part.
func HolmSequential(family []SequentialRatio) []SequentialRatio {
	out := slices.Clone(family)
	var tested []int
	for i, r := range out {
		if len(r.Looks) > 0 {
			tested = append(tested, i)
		}
	}
	m := len(tested)
	if m < 2 {
		return out
	}
	slices.SortStableFunc(tested, func(a, b int) int { return cmpFloat(out[a].minP(), out[b].minP()) })
	stopped := false
	alpha := FamilyAlpha
	for s, i := range tested {
		if !stopped {
			alpha = FamilyAlpha / float64(m-s)
			stopped = out[i].minP() > out[i].Design.Nominal(alpha)
		}
		out[i] = out[i].at(alpha)
	}
	return out
}
