package regress

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/benchsim"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// series is samples of the values given, an hour apart from t0.
func series(values ...float64) []Sample {
	out := make([]Sample, len(values))
	for i, v := range values {
		out[i] = Sample{Benchmark: fmt.Sprintf("b%d", i), At: t0.Add(time.Duration(i) * time.Hour), Value: v}
	}
	return out
}

func TestCheck(t *testing.T) {
	flat := series(1000, 1030, 980, 1010, 995)
	withRegressed := append(series(1000, 1030, 980), Sample{At: t0.Add(3 * time.Hour), Value: 500, Regressed: true})
	tests := []struct {
		name          string
		fig           Figure
		history       []Sample
		latest        float64
		rule          Rule
		checked, want bool
		reason        string
	}{
		{"within the band", FigureTPS, flat, 970, Rule{MinEffect: 0.1}, true, false, "within the band"},
		{"a 30 % drop", FigureTPS, flat, 700, Rule{MinEffect: 0.1}, true, true, "-30.2 %"},
		{"beyond the band but under the minimum effect", FigureTPS, series(1000, 1005, 998, 1002, 999), 940,
			Rule{MinEffect: 0.1}, true, false, "by less than 10 %"},
		{"better", FigureTPS, flat, 1400, Rule{MinEffect: 0.1}, true, false, "better"},
		{"latency up is worse", FigureLatency, series(2, 2.05, 1.98, 2.01), 2.6, Rule{MinEffect: 0.1}, true, true, "+29.4 %"},
		{"latency down is better", FigureLatency, series(2, 2.05, 1.98, 2.01), 1.4, Rule{MinEffect: 0.1}, true, false, "better"},
		{"two earlier results judge nothing", FigureTPS, series(1000, 1010), 500, Rule{}, false, false,
			"2 earlier result(s) in the reference, 3 needed"},
		{"a result found regressed leaves the reference", FigureTPS, withRegressed, 520, Rule{MinEffect: 0.1}, true, true,
			"3 earlier results"},
		{"since drops the level before it", FigureTPS, series(2000, 2000, 2000, 1000, 1010, 990), 995,
			Rule{MinEffect: 0.1, Since: t0.Add(150 * time.Minute)}, true, false, "within the band"},
		{"the window keeps the newest", FigureTPS, append(series(500, 500, 500, 500), series(1000, 1010, 990)...), 995,
			Rule{MinEffect: 0.1, Window: 3}, true, false, "3 earlier results"},
		{"a noisy history widens the band", FigureTPS, series(1000, 700, 1300, 800, 1200), 700, Rule{MinEffect: 0.1}, true, false,
			"within the band"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(tc.fig, tc.history, Sample{Value: tc.latest}, tc.rule)
			if got.Checked != tc.checked || got.Regressed != tc.want || !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("checked %v regressed %v (%s), want %v %v with %q", got.Checked, got.Regressed, got.Reason, tc.checked, tc.want, tc.reason)
			}
			if got.Checked && !(got.Before.Low < got.Before.Level && got.Before.Level < got.Before.High) {
				t.Errorf("band %+v does not hold its level", got.Before)
			}
		})
	}
}

// TestAlphaByConstruction: with normal noise of any size and no minimum effect, a check alarms on
// an unchanged path in Alpha of the cases, at every window (the prediction interval's promise,
// simulated with Check itself).
func TestAlphaByConstruction(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	rng := rand.New(rand.NewPCG(7, 27))
	const trials = 40000
	for _, n := range []int{3, 5, 10} {
		for _, sigma := range []float64{0.005, 0.07, 0.3} {
			alarms := 0
			values := make([]float64, n)
			for range trials {
				for i := range values {
					values[i] = 1000 * math.Exp(sigma*rng.NormFloat64())
				}
				if Check(FigureTPS, series(values...), Sample{Value: 1000 * math.Exp(sigma*rng.NormFloat64())}, Rule{}).Regressed {
					alarms++
				}
			}
			rate := float64(alarms) / trials
			// Four binomial standard errors around Alpha.
			if se := math.Sqrt(Alpha * (1 - Alpha) / trials); math.Abs(rate-Alpha) > 4*se {
				t.Errorf("n = %d, σ = %.3f: false alarms in %.3f %% of checks, want %.1f %%", n, sigma, 100*rate, 100*Alpha)
			}
		}
	}
}

// schedule draws a schedule's history of window+1 benchmarks of 3 rounds on the machine model,
// the last one's ssh scaled by effect, and says which transports the rule finds regressed in the
// last.
func schedule(m benchsim.Machine, window int, effect float64, rule Rule) map[string]bool {
	const rounds = 3
	found := map[string]bool{}
	for transport := range scheduleFigures(m, window, rounds, func(i int) float64 {
		if i == 2 {
			return effect
		}
		return 1
	}, rule) {
		found[transport] = true
	}
	return found
}

// scheduleFigures is schedule with transport i of the last benchmark scaled by scale(i), and
// says which figures of which transports the rule finds regressed.
func scheduleFigures(m benchsim.Machine, window, rounds int, scale func(int) float64, rule Rule) map[string]map[Figure]bool {
	var history = map[string]map[Figure][]Sample{}
	found := map[string]map[Figure]bool{}
	for b := 0; b <= window; b++ {
		s := func(int) float64 { return 1 }
		if b == window {
			s = scale
		}
		tb := m.DrawScaled(fmt.Sprintf("b%d", b), 3, rounds, s)
		tb.Status.CompletionTime = &metav1.Time{Time: t0.Add(time.Duration(b) * time.Hour)}
		figures := FromBenchmark(tb)
		if b == window {
			for _, j := range JudgeFigures(figures, func(tr string, fig Figure) []Sample { return history[tr][fig] }, rule) {
				if j.Regressed {
					if found[j.Transport] == nil {
						found[j.Transport] = map[Figure]bool{}
					}
					found[j.Transport][j.Figure] = true
				}
			}
		}
		for _, f := range figures {
			if history[f.Transport] == nil {
				history[f.Transport] = map[Figure][]Sample{}
			}
			for fig, s := range f.Samples {
				history[f.Transport][fig] = append(history[f.Transport][fig], s)
			}
		}
	}
	return found
}

// TestServerSlowed simulates the case on the machine model: the server itself slowed,
// every transport's tps scaled alike, the ratios unchanged. Every transport's tps must be found
// once the drop is large enough for its history, and a ratio must not be raised (beyond the
// rule's false-alarm rate); docs/user-guide/schedules.md holds the table this logs.
func TestServerSlowed(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	m := benchsim.ThisMachine(41)
	const trials, rounds = 2000, 3
	rule := Rule{MinEffect: DefaultMinEffect}
	var table strings.Builder
	table.WriteString("| earlier results | server 10 % slower | 30 % slower | 80 % slower | a ratio raised (80 %) |\n|---|---|---|---|---|\n")
	for _, n := range []int{3, 5, 10} {
		row := fmt.Sprintf("| %d |", n)
		for _, drop := range []float64{0.1, 0.3, 0.8} {
			every, ratios := 0, 0
			for range trials {
				found := scheduleFigures(m, n, rounds, func(int) float64 { return 1 - drop }, rule)
				all := true
				for _, tr := range benchsim.Transports {
					all = all && found[tr][FigureTPS]
					if found[tr][FigureRatio] {
						ratios++
					}
				}
				if all {
					every++
				}
			}
			row += fmt.Sprintf(" every tps found in %.1f %% |", 100*float64(every)/trials)
			if drop == 0.8 {
				row += fmt.Sprintf(" %.2f %% |", 100*float64(ratios)/trials)
				if float64(ratios)/trials > 0.02 {
					t.Errorf("n = %d: a ratio raised in %.2f %% of schedules whose paths did not change", n, 100*float64(ratios)/trials)
				}
				if float64(every)/trials < 0.95 {
					t.Errorf("n = %d: a server 80 %% slower found on every transport in %.1f %% only", n, 100*float64(every)/trials)
				}
			}
			// The group's mean is what sees a 30 % slower server from five results on: one band a
			// transport at the old 0.5 % found it on every transport in a third of the schedules.
			if drop == 0.3 && n >= 5 && float64(every)/trials < 0.6 {
				t.Errorf("n = %d: a server 30 %% slower found on every transport in %.1f %% only", n, 100*float64(every)/trials)
			}
		}
		table.WriteString(row + "\n")
	}
	t.Logf("%d fixed-seed schedules each, %d rounds a benchmark, minimum effect %.0f %%, the server slowed in the last:\n%s",
		trials, rounds, 100*DefaultMinEffect, table.String())
}

// TestFalseAlarms simulates schedules on this machine's noise model (benchsim.ThisMachine) with
// the project's own extraction and rule at the default minimum effect: how often an unchanged
// schedule of three transports raises Regressed for any of them, and how often a slower ssh path
// is found, by window. docs/user-guide/schedules.md reports the table this test logs.
func TestFalseAlarms(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	m := benchsim.ThisMachine(27)
	const trials, rounds = 3000, 3
	rule := Rule{MinEffect: DefaultMinEffect}
	var table strings.Builder
	table.WriteString("| earlier results | unchanged: any transport raised | ssh 10 % slower: found | ssh 15 % slower: found " +
		"| ssh 30 % slower: found | ssh 30 % slower: another raised | ssh 80 % slower: found |\n|---|---|---|---|---|---|---|\n")
	// Three earlier results leave two degrees of freedom: the band is wide, and a 30 % change is
	// found in about half the runs (docs/user-guide/schedules.md says so); five find it nearly always.
	minFound30 := map[int]float64{3: 0.4, 5: 0.9, 10: 0.95}
	for _, n := range []int{3, 5, 10} {
		var aa, found10, found15, found30, others, found80 int
		for range trials {
			if len(schedule(m, n, 1, rule)) > 0 {
				aa++
			}
			if schedule(m, n, 0.9, rule)["ssh"] {
				found10++
			}
			if schedule(m, n, 0.85, rule)["ssh"] {
				found15++
			}
			if schedule(m, n, 0.2, rule)["ssh"] {
				found80++
			}
			got := schedule(m, n, 0.7, rule)
			if got["ssh"] {
				found30++
			}
			if got["direct"] || got["tls"] {
				others++
			}
		}
		share := func(k int) float64 { return float64(k) / trials }
		fmt.Fprintf(&table, "| %d | %.2f %% | %.1f %% | %.1f %% | %.1f %% | %.2f %% | %.1f %% |\n",
			n, 100*share(aa), 100*share(found10), 100*share(found15), 100*share(found30), 100*share(others), 100*share(found80))
		// Two families a benchmark (the ratios, the tps), each at most Alpha.
		if share(aa) > 2*Alpha {
			t.Errorf("n = %d: an unchanged schedule raised Regressed in %.2f %% of runs, over %.0f %%", n, 100*share(aa), 200*Alpha)
		}
		if share(found30) < minFound30[n] {
			t.Errorf("n = %d: a 30 %% slower ssh found in %.1f %% of runs only", n, 100*share(found30))
		}
	}
	t.Logf("%d fixed-seed schedules each, %d rounds a benchmark, minimum effect %.0f %%:\n%s",
		trials, rounds, 100*DefaultMinEffect, table.String())
}

func TestFromBenchmark(t *testing.T) {
	tb := benchsim.Completed("b", []float64{1000, 1100, 900}, []float64{500, 550, 450})
	got := FromBenchmark(tb)
	if len(got) != 2 || got[0].Transport != "direct" || len(got[0].Samples) != 1 || len(got[1].Samples) != 2 {
		t.Fatalf("%+v", got)
	}
	if s := got[1].Samples[FigureRatio]; math.Abs(s.Value-0.5) > 1e-9 || math.Abs(s.Low-0.5) > 1e-9 || math.Abs(s.High-0.5) > 1e-9 {
		t.Errorf("tls's ratio %+v, want 0.5 in [0.5, 0.5]", s)
	}
	if s := got[0].Samples[FigureTPS]; s.Value != 1000 || s.Low != 900 || s.High != 1100 {
		t.Errorf("direct's tps %+v, want the median 1000 in [900, 1100]", s)
	}
	// Results in the order the runs ended: the baseline is the spec's first transport still.
	shuffled := tb.DeepCopy()
	r := shuffled.Status.Results
	r[0], r[1] = r[1], r[0]
	if got := FromBenchmark(shuffled); len(got) != 2 || got[0].Transport != "tls" || math.Abs(got[0].Samples[FigureRatio].Value-0.5) > 1e-9 {
		t.Errorf("results out of spec order: %+v", got)
	}
	rate := int32(100)
	tb.Spec.Load.Rate = &rate
	if s := FromBenchmark(tb)[0].Samples[FigureLatency]; s.Value != 4 {
		t.Errorf("an open loop's latency %+v, want 4 ms", s)
	}
	tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 2}}
	if got := FromBenchmark(tb); got != nil {
		t.Errorf("a sweep gave %+v", got)
	}
}

// TestDetectable: the schedule (direct at 25,300, 35,354 and 34,985 tps) judged alone now
// finds the fourth result's 82 % drop (its band at 2.5 % a side reaches down 61 %), says how large
// a drop it is sure to find, and a quiet history sees down to the minimum effect.
func TestDetectable(t *testing.T) {
	var history []Sample
	for i, v := range []float64{25300, 35354, 34985} {
		history = append(history, Sample{Benchmark: fmt.Sprint(i), Value: v})
	}
	f := Check(FigureTPS, history, Sample{Value: 5752}, Rule{MinEffect: DefaultMinEffect})
	if !f.Checked || !f.Regressed || math.Abs(f.Detectable-0.611) > 0.005 || f.Together {
		t.Errorf("the issue's drop: %+v", f)
	}
	if f := Check(FigureTPS, history, Sample{Value: 20000}, Rule{MinEffect: DefaultMinEffect}); f.Regressed ||
		!strings.Contains(f.Reason, "a drop smaller than 61 % (÷2.6) cannot be told from noise with 3 earlier results") {
		t.Errorf("a 37 %% drop: %+v", f)
	}
	quiet := []Sample{{Value: 1000}, {Value: 1001}, {Value: 999}, {Value: 1000}}
	if f := Check(FigureTPS, quiet, Sample{Value: 995}, Rule{MinEffect: DefaultMinEffect}); f.Detectable != DefaultMinEffect {
		t.Errorf("quiet: %+v", f)
	}
	if f := Check(FigureLatency, history, Sample{Value: 30000}, Rule{}); !strings.Contains(f.Reason, "a rise smaller than") {
		t.Errorf("latency: %q", f.Reason)
	}
}

// transportsOf are three transports' histories of five benchmarks whose own noise (about 8 %) is
// independent, each scaled by scale in the newest.
func transportsOf(scale [3]float64) []Series {
	histories := [][]float64{{1000, 1100, 900, 1050, 950}, {500, 450, 520, 550, 480}, {300, 290, 330, 270, 310}}
	var family []Series
	for i, h := range histories {
		var ref []Sample
		for b, v := range h {
			ref = append(ref, Sample{Benchmark: fmt.Sprint(b), Value: v})
		}
		family = append(family, Series{Transport: benchsim.Transports[i], History: ref, Latest: Sample{Value: h[0] * scale[i]}})
	}
	return family
}

// TestCheckFamily: a worsening every transport shares is found together when no transport's own
// band shows it; one transport's is found alone, and raises none of the others; a group whose
// benchmarks do not match judges each transport by its own band.
func TestCheckFamily(t *testing.T) {
	rule := Rule{MinEffect: DefaultMinEffect}
	tests := []struct {
		name      string
		family    []Series
		regressed []bool
		together  bool
	}{
		{"every transport 25 % lower", transportsOf([3]float64{0.75, 0.75, 0.75}), []bool{true, true, true}, true},
		{"every transport 5 % lower: under the minimum effect", transportsOf([3]float64{0.95, 0.95, 0.95}), []bool{false, false, false}, false},
		{"ssh 60 % lower alone", transportsOf([3]float64{1, 1, 0.4}), []bool{false, false, true}, false},
		{"every transport 25 % higher", transportsOf([3]float64{1.25, 1.25, 1.25}), []bool{false, false, false}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckFamily(FigureTPS, tc.family, rule)
			for i, f := range got {
				if !f.Checked || f.Regressed != tc.regressed[i] || (f.Regressed && f.Together != tc.together) {
					t.Errorf("%s: regressed %v together %v, want %v %v: %s", tc.family[i].Transport, f.Regressed, f.Together,
						tc.regressed[i], tc.together, f.Reason)
				}
				if f.DetectableTogether > f.Detectable {
					t.Errorf("%s: together %.3f above alone %.3f", tc.family[i].Transport, f.DetectableTogether, f.Detectable)
				}
			}
		})
	}
	// An unchanged family's reason says what each transport alone, and all of them together, would
	// have needed.
	unchanged := CheckFamily(FigureTPS, transportsOf([3]float64{1, 1, 1}), rule)
	if r := unchanged[0].Reason; !strings.Contains(r, "alone, or a drop smaller than") || !strings.Contains(r, "of every transport together") {
		t.Errorf("unchanged: %s", r)
	}
	t.Log(unchanged[0].Reason)
	// Without benchmark names to match the groups' means by, only the members' own bands judge.
	unnamed := transportsOf([3]float64{0.75, 0.75, 0.75})
	for i := range unnamed {
		for b := range unnamed[i].History {
			unnamed[i].History[b].Benchmark = ""
		}
	}
	named := CheckFamily(FigureTPS, transportsOf([3]float64{0.75, 0.75, 0.75}), rule)
	for i, f := range CheckFamily(FigureTPS, unnamed, rule) {
		if f.Regressed || f.DetectableTogether <= named[i].DetectableTogether {
			t.Errorf("unmatched: %+v, matched %+v", f, named[i])
		}
	}
}

// TestFamilyAlphaByConstruction: with normal noise shared between three transports in any part,
// from none to all, and no minimum effect, an unchanged benchmark raises any of them in at most
// Alpha of the cases (closed testing's promise, simulated with CheckFamily itself).
func TestFamilyAlphaByConstruction(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	rng := rand.New(rand.NewPCG(11, 40))
	const trials, sigma = 20000, 0.07
	for _, n := range []int{3, 5, 10} {
		for _, shared := range []float64{0, 0.8, 1} {
			alarms := 0
			draw := func(common float64) float64 {
				return 1000 * math.Exp(sigma*(math.Sqrt(shared)*common+math.Sqrt(1-shared)*rng.NormFloat64()))
			}
			for range trials {
				family := make([]Series, 3)
				for b := 0; b <= n; b++ {
					common := rng.NormFloat64()
					for i := range family {
						s := Sample{Benchmark: fmt.Sprint(b), Value: draw(common)}
						if b == n {
							family[i].Latest = s
						} else {
							family[i].History = append(family[i].History, s)
						}
					}
				}
				for _, f := range CheckFamily(FigureTPS, family, Rule{}) {
					if f.Regressed {
						alarms++
						break
					}
				}
			}
			rate := float64(alarms) / trials
			se := math.Sqrt(Alpha * (1 - Alpha) / trials)
			t.Logf("n = %d, %.0f %% of the noise shared: a false alarm in %.2f %% of benchmarks", n, 100*shared, 100*rate)
			if rate > Alpha+4*se {
				t.Errorf("n = %d, %.0f %% shared: false alarms in %.2f %% of benchmarks, over %.1f %%", n, 100*shared, 100*rate, 100*Alpha)
			}
		}
	}
}

// BenchmarkCheckFamily16 judges the largest family a benchmark can have, 16 transports with 10
// earlier results each: the closed test's 65,535 groups, each tested once.
func BenchmarkCheckFamily16(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	family := make([]Series, 16)
	for i := range family {
		for r := range 10 {
			family[i].History = append(family[i].History, Sample{Benchmark: fmt.Sprint(r), Value: 1000 * math.Exp(0.05*rng.NormFloat64())})
		}
		family[i].Transport, family[i].Latest = fmt.Sprint(i), Sample{Value: 900}
	}
	for b.Loop() {
		CheckFamily(FigureTPS, family, Rule{MinEffect: DefaultMinEffect})
	}
}
