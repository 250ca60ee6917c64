package stats

import (
	"math"
	"slices"
)

// MedianInterval is a distribution-free confidence interval of the median: two order statistics
// of the sample, chosen so that the true median lies between them with Confidence (the binomial
// probability of at least k samples on each side). It assumes nothing about how rounds vary,
// which suits a handful of noisy repetitions.
type MedianInterval struct {
	Low, High float64
	// Confidence is the interval's coverage: at least 0.95 when the sample allows it (6 samples
	// or more), else the largest there is, that of [min, max]: 1 − 2·0.5ⁿ (0.9375 for 5, 0.875
	// for 4, 0.75 for 3, 0.5 for 2). Zero for fewer than 2 samples, which bound nothing.
	Confidence float64
	N          int
}

// MedianCI is MedianInterval of xs, the narrowest interval [x(k), x(n+1−k)] whose coverage is at
// least 95 %.
func MedianCI(xs []float64) MedianInterval {
	n := len(xs)
	if n < 2 {
		return MedianInterval{N: n}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	// coverage(k) = P(k ≤ B ≤ n−k) for B ~ Binomial(n, 1/2): x(k) ≤ median ≤ x(n+1−k).
	coverage := func(k int) float64 {
		p := 0.0
		for i := k; i <= n-k; i++ {
			p += binomialHalf(n, i)
		}
		return p
	}
	best := 1
	for k := 2; k <= n/2; k++ {
		if coverage(k) < 0.95 {
			break
		}
		best = k
	}
	return MedianInterval{Low: sorted[best-1], High: sorted[n-best], Confidence: coverage(best), N: n}
}

// binomialHalf is P(B = i) for B ~ Binomial(n, 1/2), through logarithms so that large n does not
// overflow.
func binomialHalf(n, i int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(i) - lg(n-i) - float64(n)*math.Ln2)
}
