package stats

import (
	"errors"
	"fmt"
	"math"
)

var (
	// ErrLengthMismatch is returned when the two sides have a different number of rounds: the
	// comparison pairs round i with round i, so an unmatched round has nothing to be compared with.
	ErrLengthMismatch = errors.New("baseline and candidate have different lengths")
	// ErrEmpty is returned when there is not a single pair to compare.
	ErrEmpty = errors.New("no pairs to compare")
	// ErrNotPositive is returned by PairedRatio for a rate that is zero, negative, infinite or NaN:
	// a round with no throughput has no ratio, and its logarithm does not exist.
	ErrNotPositive = errors.New("value is not a positive finite number")
	// ErrNotFinite is returned by PairedDifference for an infinite or NaN value.
	ErrNotFinite = errors.New("value is not a finite number")
)

// Ratio is how the candidate's throughput compares with the baseline's over paired rounds: above 1
// the candidate is faster.
//
// When every round has exactly the same ratio the log-ratios have no spread and the interval has
// zero width, Low = Estimate = High. It is kept, and judged like any other, rather than treated as
// "no interval": with n ≥ 2 rounds in perfect agreement it is the data's own answer, so identical
// samples give [1, 1] (indistinguishable, since it contains 1) and an exact doubling gives [2, 2]
// (faster). Real throughput never agrees to the last bit, so this is a boundary case, not a result
// to expect.
type Ratio struct {
	// Estimate is the geometric mean of candidate_i/baseline_i, the ratio whose logarithm is the
	// mean log-ratio; unlike the arithmetic mean of ratios, it inverts exactly when the sides swap.
	Estimate float64 `json:"estimate"`
	// Low and High bound the 95 % confidence interval of the ratio. They are zero when HasInterval
	// is false.
	Low  float64 `json:"low,omitempty"`
	High float64 `json:"high,omitempty"`
	// N is the number of pairs.
	N int `json:"n"`
	// HasInterval is false with a single pair: one round says nothing about how much rounds vary.
	HasInterval bool `json:"hasInterval"`
	// Level is the interval's confidence level; 0 means 0.95. Holm raises it for a family.
	Level float64 `json:"level,omitempty"`
	// LogMean and LogSE are the mean log-ratio and its standard error, and DF the degrees of
	// freedom of its t distribution (N−1 paired, Welch's ν unpaired), from which an interval at
	// another level and a p-value are drawn.
	LogMean float64 `json:"-"`
	LogSE   float64 `json:"-"`
	DF      int     `json:"-"`
}

// df is r's degrees of freedom: DF, or N−1 for a Ratio built without it.
func (r Ratio) df() int {
	if r.DF > 0 {
		return r.DF
	}
	return r.N - 1
}

// Difference is the mean of candidate_i - baseline_i over paired rounds with its 95 % interval. It
// is the same paired t interval as Ratio's without the logarithms, for quantities that add rather
// than multiply, and it is the form textbooks print, which is how the machinery is checked.
type Difference struct {
	// Estimate is the mean paired difference.
	Estimate float64 `json:"estimate"`
	// Low and High bound the 95 % confidence interval of the mean difference. They are zero when
	// HasInterval is false.
	Low  float64 `json:"low,omitempty"`
	High float64 `json:"high,omitempty"`
	// N is the number of pairs.
	N int `json:"n"`
	// HasInterval is false with a single pair.
	HasInterval bool `json:"hasInterval"`
}

// PairedRatio compares candidate with baseline round by round, where candidate[i] and
// baseline[i] are the rates (tps, higher is better) of the same round. It computes the log-ratios
// d_i = ln(candidate_i/baseline_i) and Student's t interval on their mean,
//
//	exp(mean(d) ± t_{0.975, n-1} · sd(d)/√n),
//
// which is the paired t-test on log-transformed data: Student (1908), "The probable error of a
// mean", Biometrika 6(1); NIST/SEMATECH e-Handbook of Statistical Methods, sections 7.2.2 and 7.3.1;
// for the logarithm of ratios, Keene (1995), "The log transformation is special", Statistics in
// Medicine 14. The package documentation says why paired, why logarithms and why not a bootstrap.
//
// The log-ratio is computed as ln(candidate_i) - ln(baseline_i) so that swapping the arguments
// negates every d_i exactly, and the interval inverts up to the rounding of exp.
func PairedRatio(baseline, candidate []float64) (Ratio, error) {
	if err := checkPairs(baseline, candidate); err != nil {
		return Ratio{}, err
	}
	d := make([]float64, len(baseline))
	for i := range baseline {
		if err := checkPositive("baseline", i, baseline[i]); err != nil {
			return Ratio{}, err
		}
		if err := checkPositive("candidate", i, candidate[i]); err != nil {
			return Ratio{}, err
		}
		d[i] = math.Log(candidate[i]) - math.Log(baseline[i])
	}
	iv := tInterval(d)
	r := Ratio{Estimate: math.Exp(iv.mean), N: len(d), HasInterval: iv.ok, LogMean: iv.mean, LogSE: iv.se, DF: len(d) - 1}
	if iv.ok {
		r.Low, r.High = math.Exp(iv.low), math.Exp(iv.high)
	}
	return r, nil
}

// PairedDifference returns the mean of candidate_i - baseline_i and Student's t interval on it,
// mean ± t_{0.975, n-1} · sd/√n, the paired t interval of NIST/SEMATECH e-Handbook section 7.3.1.
func PairedDifference(baseline, candidate []float64) (Difference, error) {
	if err := checkPairs(baseline, candidate); err != nil {
		return Difference{}, err
	}
	d := make([]float64, len(baseline))
	for i := range baseline {
		if err := checkFinite("baseline", i, baseline[i]); err != nil {
			return Difference{}, err
		}
		if err := checkFinite("candidate", i, candidate[i]); err != nil {
			return Difference{}, err
		}
		d[i] = candidate[i] - baseline[i]
	}
	iv := tInterval(d)
	r := Difference{Estimate: iv.mean, N: len(d), HasInterval: iv.ok}
	if iv.ok {
		r.Low, r.High = iv.low, iv.high
	}
	return r, nil
}

// interval is a mean with its two-sided 95 % t interval; ok is false when there is no interval.
type interval struct {
	mean, low, high, se float64
	ok                  bool
}

// tInterval is the one-sample t interval on d, which for paired differences is the paired t
// interval. With a single value there are no degrees of freedom left to estimate the spread.
func tInterval(d []float64) interval {
	mean, sd := meanStdDev(d)
	n := len(d)
	if n < 2 {
		return interval{mean: mean}
	}
	se := sd / math.Sqrt(float64(n))
	h := TCritical95(n-1) * se
	return interval{mean: mean, low: mean - h, high: mean + h, se: se, ok: true}
}

func checkPairs(baseline, candidate []float64) error {
	if len(baseline) != len(candidate) {
		return fmt.Errorf("%w: %d and %d", ErrLengthMismatch, len(baseline), len(candidate))
	}
	if len(baseline) == 0 {
		return ErrEmpty
	}
	return nil
}

func checkPositive(side string, i int, x float64) error {
	// The negated comparison also rejects NaN.
	if !(x > 0) || math.IsInf(x, 1) {
		return fmt.Errorf("%s[%d] = %v: %w", side, i, x, ErrNotPositive)
	}
	return nil
}

func checkFinite(side string, i int, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("%s[%d] = %v: %w", side, i, x, ErrNotFinite)
	}
	return nil
}
