// Package steady judges whether a run's throughput held still while it was measured. A run whose
// tps climbs (caches, TCP windows, an SSH session or a pooler still warming) or sinks (table
// bloat, a filling disk) measured a moment of a trend, not the path: its median depends on when
// it stopped, and comparing it with a steady run compares two moments.
package steady

import (
	"math"

	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
)

// MaxChange is the largest change of a run's fitted tps trend from its start to its end, as a
// share of its mean, for the run to count as steady: 10 %, twice this machine's run-to-run spread
// of medians within a benchmark (3–5 %). A larger change must also be beyond the reports' noise
// (trend) to count.
const MaxChange = 0.10

// MinPoints is the fewest progress reports a trend is judged from.
const MinPoints = 5

// Judgement is a run's steadiness.
type Judgement struct {
	// Change is the fitted trend's change across the run over the mean tps: +0.2 climbed by a
	// fifth.
	Change float64
	// Steady is |Change| ≤ MaxChange.
	Steady bool
	// SettledAfter is the time from the run's start after which the rest of it was steady, in
	// seconds; 0 when it was steady throughout, -1 when it never settled.
	SettledAfter float64
}

// Judge fits a least-squares line to tps over time and reports its change across the run, and
// when the run settled: the earliest report from which on the remaining reports (at least
// MinPoints of them) are steady. ok is false with fewer than MinPoints reports.
func Judge(t, tps []float64) (j Judgement, ok bool) {
	if len(t) != len(tps) || len(t) < MinPoints {
		return Judgement{}, false
	}
	var trending bool
	j.Change, trending = trend(t, tps)
	j.Steady = !trending
	if j.Steady {
		return j, true
	}
	// A settled part is the run's second half at least: a short tail has too little power to show
	// a trend that is still there.
	j.SettledAfter = -1
	for start := 1; len(t)-start >= max(MinPoints, (len(t)+1)/2); start++ {
		if _, trending := trend(t[start:], tps[start:]); !trending {
			// The interval of the report before start is where the steady part begins.
			j.SettledAfter = t[start-1]
			break
		}
	}
	return j, true
}

// trend is the least-squares line's rise from the first to the last time over the mean, and
// whether it is a trend: a rise beyond MaxChange whose slope is also beyond the noise (its t
// statistic past Student's 99.5 % quantile). The second test keeps short, noisy runs from being
// called trending: ten 1 s reports with 10 % noise each put a tenth of standard error on the rise.
// Progress reports are autocorrelated, which inflates t; the high quantile allows for it.
func trend(t, y []float64) (float64, bool) {
	n := float64(len(t))
	var mt, my float64
	for i := range t {
		mt += t[i]
		my += y[i]
	}
	mt, my = mt/n, my/n
	var sxy, sxx float64
	for i := range t {
		sxy += (t[i] - mt) * (y[i] - my)
		sxx += (t[i] - mt) * (t[i] - mt)
	}
	if sxx == 0 || my == 0 {
		return 0, false
	}
	slope := sxy / sxx
	rise := slope * (t[len(t)-1] - t[0]) / my
	var sse float64
	for i := range t {
		r := y[i] - (my + slope*(t[i]-mt))
		sse += r * r
	}
	se := math.Sqrt(sse / (n - 2) / sxx)
	significant := se == 0 || math.Abs(slope)/se > stats.TQuantile(0.995, len(t)-2)
	return rise, math.Abs(rise) > MaxChange && significant
}

// MaxLag1 bounds the reports' lag-1 autocorrelation MeanError allows for: at 0.9 a run's reports
// count as a nineteenth of their number, and beyond it a handful of reports cannot tell a
// correlation from a trend.
const MaxLag1 = 0.9

// MeanError is the standard error of the reports' mean as a share of it: the noise within a run,
// which a longer run averages away (at 1/√length) and the spread between rounds does not. The
// reports are autocorrelated (a slow second is followed by a slow second), so their number is
// discounted as an AR(1) series' effective size, n(1 − ρ)/(1 + ρ) (ρ their lag-1 correlation,
// taken as 0 when negative: never fewer errors than independent reports would give). ok is false
// with fewer than MinPoints reports, a mean of 0, or reports that give no finite error (a runner's
// nonsense).
func MeanError(tps []float64) (float64, bool) {
	n := float64(len(tps))
	if len(tps) < MinPoints {
		return 0, false
	}
	var mean float64
	for _, y := range tps {
		mean += y
	}
	mean /= n
	if !(mean > 0) || math.IsInf(mean, 0) {
		return 0, false
	}
	var ss, lag float64
	for i, y := range tps {
		ss += (y - mean) * (y - mean)
		if i > 0 {
			lag += (y - mean) * (tps[i-1] - mean)
		}
	}
	if ss == 0 {
		return 0, true
	}
	rho := min(max(lag/ss, 0), MaxLag1)
	e := math.Sqrt(ss/(n-1)*(1+rho)/(n*(1-rho))) / mean
	return e, !math.IsNaN(e) && !math.IsInf(e, 0)
}
