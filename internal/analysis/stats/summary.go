package stats

import (
	"math"
	"slices"
)

// Summary describes one transport's repetitions on their own, before any comparison: how many
// rounds ran, where they sit and how much they spread.
type Summary struct {
	// N is the number of samples.
	N int `json:"n"`
	// Median is the middle sample, or the mean of the two middle ones for an even count. It is the
	// figure to show: one disturbed round moves it far less than the mean.
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	// StdDev is the sample standard deviation (divisor n-1), the unbiased variance's root, because
	// the repetitions are a sample of the rounds that could have run; 0 with fewer than two samples.
	StdDev float64 `json:"stdDev"`
	// CV is StdDev/Mean, the spread as a fraction of the level, so that transports with different
	// throughput can be compared for stability; 0 when N < 2 or the mean is 0.
	CV float64 `json:"cv"`
}

// Summarize describes xs. The input is not modified. An empty input gives the zero Summary rather
// than an error, because "no repetitions" is a state a report can show as it is. NaN samples make
// every field but N meaningless; callers pass measured rates, which are finite.
func Summarize(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)

	s := Summary{N: n, Min: sorted[0], Max: sorted[n-1]}
	if n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	s.Mean, s.StdDev = meanStdDev(xs)
	if n >= 2 && s.Mean != 0 {
		s.CV = s.StdDev / s.Mean
	}
	return s
}

// Median is the median of xs (Summarize's), 0 for none.
func Median(xs []float64) float64 { return Summarize(xs).Median }

// meanStdDev returns the mean and the sample standard deviation (0 for fewer than two values). It
// makes two passes, summing squared deviations from the mean, because the one-pass sum of squares
// cancels catastrophically when the spread is small against the level, as it is for tps.
func meanStdDev(xs []float64) (mean, sd float64) {
	n := len(xs)
	if n == 0 {
		return 0, 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean = sum / float64(n)
	if n < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		d := x - mean
		ss += d * d
	}
	return mean, math.Sqrt(ss / float64(n-1))
}
