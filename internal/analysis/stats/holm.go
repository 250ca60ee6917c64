package stats

import (
	"math"
	"slices"
	"sync"
)

// FamilyAlpha is the family-wise error rate Holm keeps a family of comparisons to: the chance
// that one or more of them claims a difference where there is none.
const FamilyAlpha = 0.05

// Holm adjusts a family of ratios against one baseline (every transport's against the first) by
// Holm's step-down procedure (S. Holm, "A simple sequentially rejective multiple test procedure",
// Scandinavian Journal of Statistics 6, 1979): the paired t tests' p-values in ascending order,
// the k-th (from 0) of m tested at FamilyAlpha/(m−k) until the first that is not rejected; that one
// and all after it are not. Each ratio's interval is redrawn at the level of its step
// (1 − FamilyAlpha/(m−k); those not rejected at the level of the step that stopped), so that its
// verdict is still read off its interval and the two agree. With one ratio nothing changes. Ratios
// without an interval take no part and are returned as they are.
func Holm(family []Ratio) []Ratio {
	return HolmBeyond(family, 0)
}

// HolmBeyond is Holm's procedure for differences larger than a minimum effect: each ratio is
// tested against the zone [1−threshold, 1/(1−threshold)] instead of the point 1, its p-value that
// of its interval excluding the zone (VerdictBeyond reads the verdict off the redrawn interval).
// With threshold 0 it is Holm.
func HolmBeyond(family []Ratio, threshold float64) []Ratio {
	delta := -math.Log1p(-threshold)
	out := slices.Clone(family)
	var tested []int
	for i, r := range out {
		if r.HasInterval {
			tested = append(tested, i)
		}
	}
	m := len(tested)
	if m < 2 {
		return out
	}
	slices.SortStableFunc(tested, func(a, b int) int { return cmpFloat(out[a].pValue(delta), out[b].pValue(delta)) })
	stopped := false
	alpha := FamilyAlpha
	for k, i := range tested {
		if !stopped {
			alpha = FamilyAlpha / float64(m-k)
			stopped = out[i].pValue(delta) > alpha
		}
		out[i] = out[i].at(1 - alpha)
	}
	return out
}

// pValue is the two-sided p-value of the t test of "no difference beyond delta" (a mean
// log-ratio within ±delta): the smallest α at which the (1−α) interval lies wholly outside the
// zone.
func (r Ratio) pValue(delta float64) float64 {
	beyond := math.Abs(r.LogMean) - delta
	switch {
	case beyond <= 0:
		return 1
	case r.LogSE == 0:
		return 0
	}
	return 1 - TwoSidedT(beyond/r.LogSE, r.df())
}

// at is r with its interval at the confidence level.
func (r Ratio) at(level float64) Ratio {
	h := TQuantile(1-(1-level)/2, r.df()) * r.LogSE
	r.Low, r.High, r.Level = math.Exp(r.LogMean-h), math.Exp(r.LogMean+h), level
	return r
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TwoSidedT is P(|T| ≤ t) for Student's t on df degrees of freedom, by the closed forms for
// integer df in Abramowitz & Stegun, Handbook of Mathematical Functions, 26.7.3 (odd df) and
// 26.7.4 (even df).
func TwoSidedT(t float64, df int) float64 {
	theta := math.Atan(t / math.Sqrt(float64(df)))
	c2 := math.Cos(theta) * math.Cos(theta)
	if df%2 == 1 {
		if df == 1 {
			return 2 * theta / math.Pi
		}
		term := math.Cos(theta)
		sum := term
		for k := 3; k <= df-2; k += 2 {
			term *= float64(k-1) / float64(k) * c2
			sum += term
		}
		return 2 / math.Pi * (theta + math.Sin(theta)*sum)
	}
	term, sum := 1.0, 1.0
	for k := 2; k <= df-2; k += 2 {
		term *= float64(k-1) / float64(k) * c2
		sum += term
	}
	return math.Sin(theta) * sum
}

// quantiles memoizes TQuantile: the levels asked are few (Holm's steps, the sequential design's
// table) and a sequential comparison asks one per look at every summary.
var quantiles sync.Map

type quantileKey struct {
	q  float64
	df int
}

// TQuantile is t_{q, df}, the q-quantile (q > 0.5) of Student's t, solved from TwoSidedT by
// bisection to far below the figures' rounding.
func TQuantile(q float64, df int) float64 {
	if df < 1 || q <= 0.5 || q >= 1 {
		return math.NaN()
	}
	key := quantileKey{q, df}
	if t, ok := quantiles.Load(key); ok {
		return t.(float64)
	}
	t := tQuantile(q, df)
	quantiles.Store(key, t)
	return t
}

func tQuantile(q float64, df int) float64 {
	target := 2*q - 1
	lo, hi := 0.0, 1.0
	for TwoSidedT(hi, df) < target {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if TwoSidedT(mid, df) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
