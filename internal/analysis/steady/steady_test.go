package steady

import (
	"math"
	"math/rand/v2"
	"testing"
)

// series is n one-second reports of tps: f(t) times a lognormal noise of cv.
func series(n int, cv float64, f func(t float64) float64) (ts, tps []float64) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 1; i <= n; i++ {
		t := float64(i)
		ts, tps = append(ts, t), append(tps, f(t)*math.Exp(cv*rng.NormFloat64()))
	}
	return ts, tps
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name          string
		n             int
		f             func(t float64) float64
		steady        bool
		settled       float64 // -1: never; for a steady run, 0
		changeAtLeast float64
	}{
		{"flat with this machine's per-second noise", 60, func(float64) float64 { return 20000 }, true, 0, 0},
		{"a slow drift of 5 % over the run", 60, func(t float64) float64 { return 20000 * (1 - 0.05*t/60) }, true, 0, 0},
		{"sinking by a third", 60, func(t float64) float64 { return 20000 * (1 - 0.33*t/60) }, false, -1, -0.3},
		// Half the rate for the first 10 s (a tunnel's windows opening), then flat.
		{"warming for 10 s", 60, func(t float64) float64 {
			if t <= 10 {
				return 10000
			}
			return 20000
		}, false, 10, 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, tps := series(tt.n, 0.05, tt.f)
			j, ok := Judge(ts, tps)
			if !ok || j.Steady != tt.steady {
				t.Fatalf("judged %+v (ok %v), want steady %v", j, ok, tt.steady)
			}
			if !tt.steady && (math.Abs(j.Change) < math.Abs(tt.changeAtLeast) || math.Signbit(j.Change) != math.Signbit(tt.changeAtLeast)) {
				t.Errorf("change %.3f, want at least %.2f", j.Change, tt.changeAtLeast)
			}
			if tt.settled >= 0 && math.Abs(j.SettledAfter-tt.settled) > 2 || tt.settled < 0 && j.SettledAfter != -1 {
				t.Errorf("settled after %v, want %v", j.SettledAfter, tt.settled)
			}
		})
	}
	if _, ok := Judge([]float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}); ok {
		t.Error("four reports are judged")
	}
}

// TestSteadyRunsPassAtThisMachinesNoise: 1,000 flat 10 s runs of 1 s reports with 10 % noise per
// report (more than this machine's) are all judged steady — a false NotSteady would teach users
// to ignore it.
func TestSteadyRunsPassAtThisMachinesNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	flagged := 0
	for range 1000 {
		var ts, tps []float64
		for i := 1; i <= 10; i++ {
			ts, tps = append(ts, float64(i)), append(tps, 20000*math.Exp(0.1*rng.NormFloat64()))
		}
		if j, _ := Judge(ts, tps); !j.Steady {
			flagged++
		}
	}
	if flagged > 10 {
		t.Errorf("%d of 1000 flat runs judged not steady, want at most 1 %%", flagged)
	}
}

// TestMeanError checks the within-run error against what independent and correlated noise of a
// known size give: independent reports at a 10 % spread put 10 %/√n on the mean; an AR(1) series
// of correlation 0.5 puts √3 times that; a steady run none.
func TestMeanError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ar1 := func(n int, rho float64) []float64 {
		out := make([]float64, n)
		e := 0.0
		for i := range out {
			// Stationary AR(1) with a marginal spread of 10 %.
			e = rho*e + math.Sqrt(1-rho*rho)*0.1*rng.NormFloat64()
			out[i] = 1000 * (1 + e)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		rho  float64
		want float64
	}{
		{"independent reports", 0, 0.1 / math.Sqrt(100)},
		{"correlated reports", 0.5, 0.1 / math.Sqrt(100) * math.Sqrt(3)},
	} {
		var sum float64
		const trials = 400
		for range trials {
			e, ok := MeanError(ar1(100, tt.rho))
			if !ok {
				t.Fatal("100 reports: not ok")
			}
			sum += e
		}
		if got := sum / trials; math.Abs(got-tt.want) > 0.1*tt.want {
			t.Errorf("%s: mean error %.4f, want %.4f within 10 %%", tt.name, got, tt.want)
		}
	}
	if e, ok := MeanError([]float64{500, 500, 500, 500, 500}); !ok || e != 0 {
		t.Errorf("a steady run: %v %v", e, ok)
	}
	for name, tps := range map[string][]float64{
		"4 reports":       {1, 2, 3, 4},
		"a report of NaN": {1, 2, math.NaN(), 4, 5},
		"an infinite one": {1, 2, math.Inf(1), 4, 5},
		"a huge spread":   {1e308, -1e308, 1e308, -1e308, 1e308},
		"a negative mean": {-1, -2, -3, -4, -5},
	} {
		if e, ok := MeanError(tps); ok {
			t.Errorf("%s: judged, %v", name, e)
		}
	}
}
