package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// near reports whether got is within tol of want, absolutely.
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one sample has no spread", []float64{3}, Summary{N: 1, Median: 3, Min: 3, Max: 3, Mean: 3}},
		{"odd count takes the middle", []float64{3, 1, 2}, Summary{N: 3, Median: 2, Min: 1, Max: 3, Mean: 2, StdDev: 1, CV: 0.5}},
		// The textbook set whose population sd is exactly 2; the sample sd is sqrt(32/7).
		{"even count averages the middle two", []float64{2, 4, 4, 4, 5, 5, 7, 9}, Summary{
			N: 8, Median: 4.5, Min: 2, Max: 9, Mean: 5, StdDev: math.Sqrt(32.0 / 7), CV: math.Sqrt(32.0/7) / 5,
		}},
		{"zero mean has no CV", []float64{-1, 1}, Summary{N: 2, Median: 0, Min: -1, Max: 1, Mean: 0, StdDev: math.Sqrt2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.xs)
			got := Summarize(in)
			if got.N != tt.want.N {
				t.Fatalf("N = %d, want %d", got.N, tt.want.N)
			}
			const tol = 1e-12
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"Median", got.Median, tt.want.Median},
				{"Min", got.Min, tt.want.Min},
				{"Max", got.Max, tt.want.Max},
				{"Mean", got.Mean, tt.want.Mean},
				{"StdDev", got.StdDev, tt.want.StdDev},
				{"CV", got.CV, tt.want.CV},
			} {
				if !near(f.got, f.want, tol) {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
			if !slices.Equal(in, tt.xs) {
				t.Errorf("Summarize reordered its input: %v", in)
			}
		})
	}
	// The published figure, to the three decimals it is usually quoted with.
	if sd := Summarize([]float64{2, 4, 4, 4, 5, 5, 7, 9}).StdDev; !near(sd, 2.138, 5e-4) {
		t.Errorf("sample sd = %v, want 2.138", sd)
	}
}

// Student's sleep data (Cushny & Peebles, as analysed by Student 1908; R's `sleep` data set):
// extra hours of sleep of ten patients under each of two drugs.
var (
	sleepGroup1 = []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	sleepGroup2 = []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
)

func TestPairedDifference(t *testing.T) {
	tests := []struct {
		name     string
		a, b     []float64
		want     Difference
		tol      float64
		wantErr  error
		exactT   float64 // when set, the published t_{0.975, n-1} to full precision
		exactLow float64 // the published bounds that go with exactT
		exactHi  float64
	}{
		// R: t.test(extra ~ group, data = sleep, paired = TRUE) prints mean difference -1.58 and
		// 95 % interval [-2.4598858, -0.7001142] for group1 - group2, using qt(0.975, 9) = 2.2621572.
		// With the table's 2.262 the half-width is short by 0.0001572 · se = 0.0001572 · 0.3889587
		// = 6.1e-5, so the bounds match to 1e-4. (The worst case a 3-decimal t allows here is
		// 0.0005 · se ≈ 2e-4.) exactT checks the mean and the standard error without the rounding.
		{
			name: "Student's sleep data", a: sleepGroup1, b: sleepGroup2,
			want: Difference{Estimate: 1.58, Low: 0.7001142, High: 2.4598858, N: 10, HasInterval: true},
			tol:  1e-4, exactT: 2.2621572, exactLow: 0.7001142, exactHi: 2.4598858,
		},
		{
			name: "one pair has no interval", a: []float64{1}, b: []float64{3},
			want: Difference{Estimate: 2, N: 1}, tol: 1e-12,
		},
		{
			name: "constant difference gives a zero-width interval", a: []float64{1, 2, 3}, b: []float64{2, 3, 4},
			want: Difference{Estimate: 1, Low: 1, High: 1, N: 3, HasInterval: true}, tol: 1e-12,
		},
		{name: "different lengths", a: []float64{1, 2}, b: []float64{1}, wantErr: ErrLengthMismatch},
		{name: "empty", wantErr: ErrEmpty},
		{name: "NaN", a: []float64{1, math.NaN()}, b: []float64{1, 2}, wantErr: ErrNotFinite},
		{name: "infinity", a: []float64{1, 2}, b: []float64{1, math.Inf(-1)}, wantErr: ErrNotFinite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PairedDifference(tt.a, tt.b)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("estimate %.10f, interval [%.10f, %.10f]", got.Estimate, got.Low, got.High)
			if got.N != tt.want.N || got.HasInterval != tt.want.HasInterval {
				t.Fatalf("N, HasInterval = %d, %t; want %d, %t", got.N, got.HasInterval, tt.want.N, tt.want.HasInterval)
			}
			if !near(got.Estimate, tt.want.Estimate, tt.tol) || !near(got.Low, tt.want.Low, tt.tol) || !near(got.High, tt.want.High, tt.tol) {
				t.Errorf("got %v [%v, %v], want %v [%v, %v] to %g",
					got.Estimate, got.Low, got.High, tt.want.Estimate, tt.want.Low, tt.want.High, tt.tol)
			}
			if tt.exactT != 0 {
				se := (got.High - got.Low) / 2 / TCritical95(got.N-1)
				low, high := got.Estimate-tt.exactT*se, got.Estimate+tt.exactT*se
				if !near(low, tt.exactLow, 1e-7) || !near(high, tt.exactHi, 1e-7) {
					t.Errorf("with the exact t: [%.9f, %.9f], want [%v, %v] to 1e-7", low, high, tt.exactLow, tt.exactHi)
				}
			}
		})
	}
}

func TestPairedRatio(t *testing.T) {
	tests := []struct {
		name       string
		baseline   []float64
		candidate  []float64
		want       Ratio
		tol        float64
		verdict    Verdict
		reason     string // a substring of Reason
		wantErr    error
		wantErrMsg string
	}{
		// Zero spread is kept as a zero-width interval and judged like any other; [1, 1] contains 1.
		{
			name: "identical samples", baseline: []float64{1000, 1100, 950}, candidate: []float64{1000, 1100, 950},
			want: Ratio{Estimate: 1, Low: 1, High: 1, N: 3, HasInterval: true}, tol: 0,
			verdict: Indistinguishable, reason: "[1.000, 1.000] over 3 repetitions contains 1",
		},
		{
			name: "exactly twice the baseline", baseline: []float64{1000, 1100, 950, 1020}, candidate: []float64{2000, 2200, 1900, 2040},
			want: Ratio{Estimate: 2, Low: 2, High: 2, N: 4, HasInterval: true}, tol: 1e-12,
			verdict: Faster, reason: "lies above 1",
		},
		// A/A: the same transport on both sides, ±4 % noise. Expected values computed independently
		// from the formula with t_{0.975, 4} = 2.776.
		{
			name: "noisy A/A", baseline: []float64{1000, 1040, 980, 1010, 995}, candidate: []float64{1020, 1000, 1005, 990, 1012},
			want: Ratio{Estimate: 1.000542669, Low: 0.965752713, High: 1.036585887, N: 5, HasInterval: true}, tol: 1e-8,
			verdict: Indistinguishable, reason: "contains 1",
		},
		{
			name: "clearly slower", baseline: []float64{1000, 1000, 1000}, candidate: []float64{300, 330, 310},
			want: Ratio{Estimate: 0.313087428, Low: 0.277601452, High: 0.353109600, N: 3, HasInterval: true}, tol: 1e-8,
			verdict: Slower, reason: "lies below 1",
		},
		{
			name: "one pair", baseline: []float64{1000}, candidate: []float64{1500},
			want: Ratio{Estimate: 1.5, N: 1}, tol: 1e-12,
			verdict: Indistinguishable, reason: "one repetition: no interval",
		},
		{name: "different lengths", baseline: []float64{1, 2}, candidate: []float64{1}, wantErr: ErrLengthMismatch},
		{name: "empty", baseline: []float64{}, candidate: []float64{}, wantErr: ErrEmpty},
		{
			name: "zero candidate", baseline: []float64{1, 2}, candidate: []float64{1, 0},
			wantErr: ErrNotPositive, wantErrMsg: "candidate[1] = 0",
		},
		{
			name: "negative baseline", baseline: []float64{-1, 2}, candidate: []float64{1, 2},
			wantErr: ErrNotPositive, wantErrMsg: "baseline[0] = -1",
		},
		{name: "NaN", baseline: []float64{1, math.NaN()}, candidate: []float64{1, 2}, wantErr: ErrNotPositive},
		{name: "infinity", baseline: []float64{1, 2}, candidate: []float64{math.Inf(1), 2}, wantErr: ErrNotPositive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PairedRatio(tt.baseline, tt.candidate)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantErrMsg) {
					t.Fatalf("err = %v, want %v containing %q", err, tt.wantErr, tt.wantErrMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.N != tt.want.N || got.HasInterval != tt.want.HasInterval {
				t.Fatalf("N, HasInterval = %d, %t; want %d, %t", got.N, got.HasInterval, tt.want.N, tt.want.HasInterval)
			}
			if !near(got.Estimate, tt.want.Estimate, tt.tol) || !near(got.Low, tt.want.Low, tt.tol) || !near(got.High, tt.want.High, tt.tol) {
				t.Errorf("got %v [%v, %v], want %v [%v, %v] to %g",
					got.Estimate, got.Low, got.High, tt.want.Estimate, tt.want.Low, tt.want.High, tt.tol)
			}
			if v := got.Verdict(); v != tt.verdict {
				t.Errorf("Verdict = %s, want %s", v, tt.verdict)
			}
			if r := got.Reason(); !strings.Contains(r, tt.reason) {
				t.Errorf("Reason = %q, want it to contain %q", r, tt.reason)
			}
		})
	}
}

func TestVerdictOfZeroRatio(t *testing.T) {
	var r Ratio
	if r.Verdict() != Indistinguishable || r.Reason() != "no repetitions: no interval" {
		t.Errorf("zero Ratio: %s, %q", r.Verdict(), r.Reason())
	}
}

// TestPairedRatioProperties checks, on random positive pairs with a fixed seed, that the estimate
// lies inside its interval, that it is the geometric mean of the per-round ratios, and that swapping
// baseline and candidate turns [L, H] into [1/H, 1/L].
func TestPairedRatioProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(20260101, 1))
	for trial := range 2000 {
		n := 1 + rng.IntN(20)
		shift := 0.4*rng.Float64() - 0.2
		spread := 0.2 * rng.Float64()
		baseline := make([]float64, n)
		candidate := make([]float64, n)
		logSum := 0.0
		for i := range n {
			baseline[i] = 1000 * math.Exp(0.3*rng.NormFloat64())
			candidate[i] = baseline[i] * math.Exp(shift+spread*rng.NormFloat64())
			logSum += math.Log(candidate[i] / baseline[i])
		}
		r, err := PairedRatio(baseline, candidate)
		if err != nil {
			t.Fatal(err)
		}
		s, err := PairedRatio(candidate, baseline)
		if err != nil {
			t.Fatal(err)
		}
		const rel = 1e-12
		if geo := math.Exp(logSum / float64(n)); !near(r.Estimate/geo, 1, 1e-9) {
			t.Fatalf("trial %d: estimate %v, geometric mean of ratios %v", trial, r.Estimate, geo)
		}
		if !near(r.Estimate*s.Estimate, 1, rel) {
			t.Fatalf("trial %d: swapped estimate %v is not 1/%v", trial, s.Estimate, r.Estimate)
		}
		if r.HasInterval != (n > 1) || s.HasInterval != r.HasInterval {
			t.Fatalf("trial %d: n = %d, HasInterval %t and %t", trial, n, r.HasInterval, s.HasInterval)
		}
		if !r.HasInterval {
			continue
		}
		if r.Low > r.Estimate || r.Estimate > r.High {
			t.Fatalf("trial %d: estimate %v outside [%v, %v]", trial, r.Estimate, r.Low, r.High)
		}
		if !near(s.Low*r.High, 1, rel) || !near(s.High*r.Low, 1, rel) {
			t.Fatalf("trial %d: swapped interval [%v, %v] is not the inverse of [%v, %v]", trial, s.Low, s.High, r.Low, r.High)
		}
		wantSwapped := map[Verdict]Verdict{Faster: Slower, Slower: Faster, Indistinguishable: Indistinguishable}
		if s.Verdict() != wantSwapped[r.Verdict()] {
			t.Fatalf("trial %d: verdict %s swaps to %s", trial, r.Verdict(), s.Verdict())
		}
	}
}

// TestPairedRatioCoverage simulates log-normal rounds and counts how often the interval contains the
// true ratio: it should be 95 % at every n, including the small ones where a normal 1.96 (or a
// bootstrap) falls short. 4000 trials put the binomial standard error near 0.0035; the seed is
// fixed, so the bounds are not flaky.
func TestPairedRatioCoverage(t *testing.T) {
	const (
		trials    = 4000
		trueRatio = 1.1
	)
	rng := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{2, 3, 5, 10, 20} {
		covered := 0
		baseline := make([]float64, n)
		candidate := make([]float64, n)
		for range trials {
			for i := range n {
				baseline[i] = 1000 * math.Exp(0.2*rng.NormFloat64())
				candidate[i] = baseline[i] * trueRatio * math.Exp(0.05*rng.NormFloat64())
			}
			r, err := PairedRatio(baseline, candidate)
			if err != nil {
				t.Fatal(err)
			}
			if r.Low <= trueRatio && trueRatio <= r.High {
				covered++
			}
		}
		if c := float64(covered) / trials; c < 0.935 || c > 0.965 {
			t.Errorf("n = %d: coverage %.4f, want 0.95 ± 0.015", n, c)
		} else {
			t.Logf("n = %d: coverage %.4f", n, c)
		}
	}
}

// exactT975 solves TwoSidedT(t, df) = 0.95 by bisection.
func exactT975(df int) float64 {
	lo, hi := 0.0, 100.0
	for range 200 {
		mid := (lo + hi) / 2
		if TwoSidedT(mid, df) < 0.95 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

func TestTCritical95(t *testing.T) {
	tests := []struct {
		df   int
		want float64
	}{
		{1, 12.706}, {2, 4.303}, {3, 3.182}, {4, 2.776}, {5, 2.571}, {9, 2.262}, {19, 2.093}, {30, 2.042},
		{35, 2.042}, {40, 2.021}, {59, 2.009}, {100, 1.984}, {1000, 1.984},
	}
	for _, tt := range tests {
		if got := TCritical95(tt.df); got != tt.want {
			t.Errorf("TCritical95(%d) = %v, want %v", tt.df, got, tt.want)
		}
	}
	if !math.IsNaN(TCritical95(0)) {
		t.Errorf("TCritical95(0) = %v, want NaN", TCritical95(0))
	}

	prev := math.Inf(1)
	for df := 1; df <= 200; df++ {
		got, exact := TCritical95(df), exactT975(df)
		tabulated := df <= 30 || slices.ContainsFunc(t975Sparse, func(r struct {
			df int
			t  float64
		}) bool {
			return r.df == df
		})
		switch {
		case tabulated && !near(got, exact, 5e-4):
			// A published three-decimal value is the exact quantile rounded.
			t.Errorf("df %d: table %v, exact %.6f", df, got, exact)
		case !tabulated && got < exact-5e-4:
			// Between rows the lookup may be wide, never narrow.
			t.Errorf("df %d: %v is below the exact %.6f", df, got, exact)
		case got > prev:
			t.Errorf("df %d: %v rises above df %d's %v", df, got, df-1, prev)
		}
		prev = got
	}
}

func BenchmarkPairedRatio(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	baseline := make([]float64, 20)
	candidate := make([]float64, 20)
	for i := range baseline {
		baseline[i] = 1000 + 100*rng.Float64()
		candidate[i] = 1100 + 100*rng.Float64()
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PairedRatio(baseline, candidate); err != nil {
			b.Fatal(err)
		}
	}
}
