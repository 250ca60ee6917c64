package sweep

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// points builds a sweep's points for one transport "t" from each point's tps, round by round.
func points(values []int32, tps [][]float64) []Point {
	out := make([]Point, len(values))
	for i, v := range values {
		res := benchv1.TransportResult{Transport: "t"}
		for r, x := range tps[i] {
			res.Runs = append(res.Runs, benchv1.RunResult{Round: int32(r + 1), TPS: x, Transactions: 1000})
		}
		res.TPS = median(tps[i])
		out[i] = Point{Value: v, Results: []benchv1.TransportResult{res}}
	}
	return out
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

var transports = []benchv1.TransportSpec{{Name: "t"}}

func TestKnee(t *testing.T) {
	values := []int32{1, 2, 4, 8}
	tests := []struct {
		name      string
		tps       [][]float64
		knee      int32 // 0: none
		saturated bool
		says      string
	}{
		{"doubles to 4, then flat", [][]float64{{100, 102, 98}, {200, 203, 197}, {400, 396, 405}, {401, 398, 404}}, 4, true,
			"4 is the last point that gains"},
		{"still doubling at the last point", [][]float64{{100, 102, 98}, {200, 203, 197}, {400, 396, 405}, {800, 790, 812}}, 8,
			false, "knee lies beyond the sweep"},
		{"flat from the first point", [][]float64{{100, 102, 98}, {101, 99, 100}, {99, 102, 100}, {100, 98, 101}}, 1, true,
			"flat from 1"},
		{"a 3 % gain is not scaling", [][]float64{{100, 101, 99}, {103, 104, 102}, {106, 107, 105}, {109, 110, 108}}, 1, true,
			"no step gains beyond 5 %"},
		{"a step lost in noise, then a gain", [][]float64{{100, 102, 98}, {200, 203, 197}, {150, 260, 205}, {800, 790, 812}},
			8, false, "still gaining"},
		{"one round: no interval, no knee", [][]float64{{100}, {200}, {400}, {400}}, 0, false, "no interval"},
		{"falls after the peak", [][]float64{{100, 102, 98}, {200, 203, 197}, {150, 152, 149}, {120, 119, 121}}, 2, true,
			"2 is the last point"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			curves := Curves(benchv1.MethodPaired, transports, points(values, tt.tps))
			if len(curves) != 1 {
				t.Fatalf("%d curves", len(curves))
			}
			c := curves[0]
			if (c.Knee == nil) != (tt.knee == 0) || (c.Knee != nil && *c.Knee != tt.knee) || c.Saturated != tt.saturated {
				t.Errorf("knee %v saturated %v (%s); want %d, %v", c.Knee, c.Saturated, c.KneeReason, tt.knee, tt.saturated)
			}
			if !strings.Contains(c.KneeReason, tt.says) {
				t.Errorf("reason %q lacks %q", c.KneeReason, tt.says)
			}
			if c.Points[0].Gain != nil || c.Points[1].Gain == nil {
				t.Errorf("gains: first %v, second %v", c.Points[0].Gain, c.Points[1].Gain)
			}
		})
	}
}

// TestPeakAndBand: the peak is the highest median; each point's band is the median's
// distribution-free interval (three runs: their range, at 75 %).
func TestPeakAndBand(t *testing.T) {
	c := Curves(benchv1.MethodPaired, transports, points([]int32{1, 2, 4},
		[][]float64{{100, 110, 90}, {300, 320, 280}, {250, 260, 240}}))[0]
	if c.Peak != 2 || c.PeakTPS != 300 {
		t.Errorf("peak %d at %.0f tps, want 2 at 300", c.Peak, c.PeakTPS)
	}
	p := c.Points[1]
	if p.TPSLow == nil || *p.TPSLow != 280 || *p.TPSHigh != 320 || p.Confidence != 0.75 || p.Runs != 3 {
		t.Errorf("band %v–%v at %v over %d runs", p.TPSLow, p.TPSHigh, p.Confidence, p.Runs)
	}
}

// TestIncompleteCurve: a transport not yet measured at every point has no curve.
func TestIncompleteCurve(t *testing.T) {
	pts := points([]int32{1, 2}, [][]float64{{100, 101}, {200, 201}})
	pts[1].Results = nil
	if c := Curves(benchv1.MethodPaired, transports, pts); len(c) != 0 {
		t.Errorf("%d curves from an incomplete sweep", len(c))
	}
}

// TestLimiter: the part that ran out in most runs is named with its count.
func TestLimiter(t *testing.T) {
	runs := []benchv1.RunResult{{Limiter: &benchv1.Limiter{Part: "ssh", Evidence: "tunnel-0 at 99% of its core"}},
		{Limiter: &benchv1.Limiter{Part: "ssh", Evidence: "tunnel-0 at 97% of its core"}},
		{Limiter: &benchv1.Limiter{Part: "client"}}, {}}
	if got := limiter(runs); got != "ssh in 2/4 runs: tunnel-0 at 99% of its core" {
		t.Errorf("limiter %q", got)
	}
	runs[0].Limiter.Evidence = strings.Repeat("x", 1000)
	if got := limiter(runs); len(got) > 256 {
		t.Errorf("a limiter of %d bytes", len(got))
	}
	if got := limiter(runs[3:]); got != "" {
		t.Errorf("limiter %q without one", got)
	}
}

// kneeTrial draws one sweep of a path that scales linearly up to 4 clients and is flat beyond:
// each round's runs share a drift (the machine between rounds, sd driftSD in log) and each run has
// its own noise (sd noiseSD in log), and returns the knee the rule finds (0: none).
func kneeTrial(rng *rand.Rand, values []int32, reps int, driftSD, noiseSD float64) int32 {
	tps := make([][]float64, len(values))
	drift := make([]float64, reps)
	for r := range drift {
		drift[r] = rng.NormFloat64() * driftSD
	}
	for i, v := range values {
		for r := range reps {
			tps[i] = append(tps[i], 100*float64(min(v, 4))*math.Exp(drift[r]+rng.NormFloat64()*noiseSD))
		}
	}
	c := Curves(benchv1.MethodPaired, transports, points(values, tps))[0]
	if c.Knee == nil {
		return 0
	}
	return *c.Knee
}

// TestKneeSimulation runs the knee rule, as the operator runs it, on simulated sweeps of a path
// that doubles up to 4 clients and is flat beyond, with this machine's noise: a 5 % drift between
// rounds and 10 % between runs. A knee placed beyond 4 is a false gain somewhere on the flat part,
// which Holm keeps to at most 5 % of sweeps; a knee before 4 is a real doubling the rounds could
// not show, which with 5 repetitions happens rarely. The rates are logged for docs/user-guide/sweeps.md.
func TestKneeSimulation(t *testing.T) {
	values := []int32{1, 2, 4, 8, 16}
	for _, tt := range []struct {
		reps     int
		minExact float64
		maxLate  float64
	}{{3, 0.5, 0.05}, {5, 0.95, 0.05}} {
		rng := rand.New(rand.NewPCG(1, uint64(tt.reps)))
		const trials = 2000
		exact, late := 0, 0
		for range trials {
			switch k := kneeTrial(rng, values, tt.reps, 0.05, 0.10); {
			case k == 4:
				exact++
			case k > 4:
				late++
			}
		}
		pExact, pLate := float64(exact)/trials, float64(late)/trials
		t.Logf("%d repetitions: knee at 4 in %.1f %%, beyond it in %.1f %% of %d sweeps", tt.reps, 100*pExact, 100*pLate, trials)
		// Three standard errors of the Monte Carlo rate above the bound.
		if pLate > tt.maxLate+3*math.Sqrt(tt.maxLate*(1-tt.maxLate)/trials) {
			t.Errorf("%d repetitions: a knee beyond 4 in %.1f %% of sweeps, more than %.0f %%", tt.reps, 100*pLate, 100*tt.maxLate)
		}
		if pExact < tt.minExact {
			t.Errorf("%d repetitions: the knee at 4 in only %.1f %% of sweeps, want %.0f %%", tt.reps, 100*pExact, 100*tt.minExact)
		}
	}
}
