// Package regress decides whether a schedule's newest result for a transport regressed against
// the results before it.
//
// One transport's test is a prediction interval (Hahn & Meeker, "Statistical Intervals", Wiley
// 1991, §4.7; NIST/SEMATECH e-Handbook of Statistical Methods, §7.2.2): if the earlier results
// x₁…xₙ (their logarithms: the noise of a rate is multiplicative) and the new one y are drawn
// from one normal distribution, (x̄ − y) / (s·√(1 + 1/n)) follows Student's t on n − 1 degrees of
// freedom, so a new result below the band x̄ − t(1 − a, n − 1)·s·√(1 + 1/n) happens by chance with
// probability a, whatever the noise's size. The transports of a benchmark are judged together,
// one figure at a time, by a closed test of such bands (family.go): at most Alpha false alarms a
// figure by construction. A minimum effect on top (the change must also be at least MinEffect of
// the level) lowers it further and keeps a tiny but significant change on a very quiet history
// from alarming. orion/Hunter use E-divisive change points (Matteson & James 2014) over a whole
// history; a schedule asks a simpler question of each new result — is it beyond what the history
// says a result varies by — which this answers at the first result after a change, where a
// change-point test needs several on both sides.
//
// A result found regressed leaves the reference: the next results are compared with the level
// before the change, so a lasting regression stays raised until the path is fixed or a person
// accepts the new level (the reference then starts after it: Reference.Since).
//
// Simulated false-alarm rates and power at this machine's noise are in TestFalseAlarms,
// TestServerSlowed and docs/user-guide/schedules.md.
package regress

import (
	"fmt"
	"time"
)

// Figure is what is compared: each has a direction in which it is worse.
type Figure string

const (
	// FigureRatio is a transport's paired ratio of tps to its benchmark's baseline: drift between
	// benchmarks that hits both paths cancels in it. Lower is worse.
	FigureRatio Figure = "ratio"
	// FigureTPS is a transport's absolute tps (the median of its rounds). Lower is worse.
	FigureTPS Figure = "tps"
	// FigureLatency is a transport's mean latency in ms, the figure of an open-loop load whose
	// rate fixes the tps. Higher is worse.
	FigureLatency Figure = "latency"
)

// higherIsWorse says in which direction f regresses.
func (f Figure) higherIsWorse() bool { return f == FigureLatency }

// smallerChange names a worsening of f smaller than the fraction d: "a drop smaller than 78 %
// (÷4.5)", "a rise smaller than 120 % (×2.2)".
func (f Figure) smallerChange(d float64) string {
	if f.higherIsWorse() {
		return fmt.Sprintf("a rise smaller than %.0f %% (×%.2g)", 100*d, 1+d)
	}
	if d >= 1 {
		return "any drop"
	}
	return fmt.Sprintf("a drop smaller than %.0f %% (÷%.2g)", 100*d, 1/(1-d))
}

// Alpha is the one-sided false-alarm rate of one figure across all the transports of a
// benchmark (a family: every transport's tps, or every transport's ratio to the baseline) under
// the test's assumptions: closed testing (familyRejects) holds the chance that any transport of
// the family is raised while none changed to Alpha, whatever their correlation. A benchmark has
// two families (its ratios and its absolute figure): at most 5 % of an unchanged schedule's runs
// raise a false alarm, before the minimum effect cuts that further (TestFalseAlarms).
const Alpha = 0.025

// MinHistory is the fewest earlier results a check needs: with two, s has one degree of freedom
// and the band is too wide to find anything but a collapse; three give two.
const MinHistory = 3

// Sample is one benchmark's figure for a transport.
type Sample struct {
	Benchmark string    `json:"benchmark"`
	At        time.Time `json:"at"`
	Value     float64   `json:"value"`
	// Low and High bound the figure's own 95 % interval over the benchmark's rounds; zero
	// without one (a single round).
	Low  float64 `json:"low,omitempty"`
	High float64 `json:"high,omitempty"`
	// Regressed marks a result found regressed: it is left out of later references.
	Regressed bool `json:"regressed,omitempty"`
}

// Rule is how a check is made.
type Rule struct {
	// Window is how many earlier results, the newest ones, form the reference.
	Window int
	// MinEffect is the smallest relative change that counts, e.g. 0.10 for 10 %.
	MinEffect float64
	// Since, when set, starts the reference at that time: results before it (a level a person
	// accepted as past) are left out.
	Since time.Time
}

// Band is the reference: the level the earlier results give and the band a new result falls in
// with probability 1 − 2α when nothing changed.
type Band struct {
	// Level is the geometric mean of the reference results.
	Level float64 `json:"level"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	// N is the number of reference results.
	N int `json:"n"`
}

// Finding is a check's outcome.
type Finding struct {
	Figure Figure `json:"figure"`
	Before Band   `json:"before"`
	After  Sample `json:"after"`
	// Change is After.Value over Before.Level, minus 1: −0.3 is 30 % lower.
	Change float64 `json:"change"`
	// Regressed is true when the new result lies beyond the band on the worse side and by at
	// least the minimum effect.
	Regressed bool `json:"regressed"`
	// Checked is false when the reference had fewer than MinHistory results: nothing was judged.
	Checked bool `json:"checked"`
	// Detectable is the smallest worsening of this transport's figure alone that the check is
	// sure to find, as a fraction of the level (0.78: a result 78 % lower): its band's edge on the
	// worse side, or the minimum effect when that is further. A smaller one passes unseen unless
	// other transports worsen with it.
	Detectable float64 `json:"detectable"`
	// DetectableTogether is the smallest worsening found when every transport of the family
	// worsens alike (a slower server or node): the family's mean is judged too, whose band is
	// narrower than one transport's (a result's noise that is its own averages out) and whose
	// test has more of the false-alarm rate to itself (familyRejects).
	DetectableTogether float64 `json:"detectableTogether"`
	// Together is true when the finding needed the other transports: this transport's result
	// lies within its own band, but every group of the family it belongs to is beyond its band.
	Together bool `json:"together,omitempty"`
	// Reason says why, in words.
	Reason string `json:"reason"`
}

// Check judges latest against the results before it, oldest first: a family of one transport.
func Check(fig Figure, history []Sample, latest Sample, rule Rule) Finding {
	return CheckFamily(fig, []Series{{History: history, Latest: latest}}, rule)[0]
}

// Reference is the part of history a new result is compared with: results not found regressed,
// from rule.Since on, the newest rule.Window of them, oldest first.
func Reference(history []Sample, rule Rule) []Sample {
	var ref []Sample
	for _, s := range history {
		if s.Regressed || s.Value <= 0 || (!rule.Since.IsZero() && s.At.Before(rule.Since)) {
			continue
		}
		ref = append(ref, s)
	}
	if rule.Window > 0 && len(ref) > rule.Window {
		ref = ref[len(ref)-rule.Window:]
	}
	return ref
}

func reason(f Finding, rule Rule) string {
	after := figure(f.After.Value)
	if f.After.High > 0 {
		after += fmt.Sprintf(" [%s, %s]", figure(f.After.Low), figure(f.After.High))
	}
	where := fmt.Sprintf("%s %s is %+.1f %% from the %d earlier results' %s (band %s–%s)",
		f.Figure, after, 100*f.Change, f.Before.N, figure(f.Before.Level),
		figure(f.Before.Low), figure(f.Before.High))
	switch {
	case f.Regressed && f.Together:
		return where + fmt.Sprintf(": within its own band, but worse with every other transport of the benchmark "+
			"beyond theirs together, and by at least %.0f %%", 100*rule.MinEffect)
	case f.Regressed:
		return where + fmt.Sprintf(": beyond the band on the worse side and by at least %.0f %%", 100*rule.MinEffect)
	case f.After.Value < f.Before.Low || f.After.Value > f.Before.High:
		return where + fmt.Sprintf(": beyond the band, but better or by less than %.0f %%", 100*rule.MinEffect)
	case f.DetectableTogether < f.Detectable:
		return where + fmt.Sprintf(": within the band; %s alone, or %s of every transport together, cannot be told "+
			"from noise with %d earlier results", f.Figure.smallerChange(f.Detectable),
			f.Figure.smallerChange(f.DetectableTogether), f.Before.N)
	default:
		return where + fmt.Sprintf(": within the band; %s cannot be told from noise with %d earlier results",
			f.Figure.smallerChange(f.Detectable), f.Before.N)
	}
}

// figure prints a value with four significant digits: tps in thousands and ratios below 1 alike.
func figure(v float64) string { return fmt.Sprintf("%.4g", v) }

// DefaultMinEffect is the smallest change a schedule calls a regression unless told otherwise:
// 10 %, twice the 5–7 % by which this machine's benchmarks move between them.
const DefaultMinEffect = 0.10
