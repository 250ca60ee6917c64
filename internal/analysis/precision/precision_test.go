package precision

import (
	"math"
	"testing"

	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/benchsim"
)

func TestSettled(t *testing.T) {
	decide := &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
	within := &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide, MinEffectPercent: ptr.To[int32](5)}
	width := &benchv1.PrecisionTarget{Goal: benchv1.PrecisionHalfWidth, HalfWidthPercent: ptr.To[int32](3)}
	for _, tt := range []struct {
		name      string
		target    *benchv1.PrecisionTarget
		verdict   benchv1.Verdict
		low, high float64
		want      bool
	}{
		{"slower settles a decision", decide, benchv1.VerdictSlower, 0.6, 0.8, true},
		{"faster settles a decision", decide, benchv1.VerdictFaster, 1.1, 1.3, true},
		{"no verdict does not, without a minimum effect", decide, benchv1.VerdictIndistinguishable, 0.99, 1.01, false},
		{"an interval within the minimum effect settles", within, benchv1.VerdictIndistinguishable, 0.96, 1.04, true},
		{"one reaching beyond it does not", within, benchv1.VerdictIndistinguishable, 0.94, 1.04, false},
		// 1/(1 − 0.05) = 1.0526: the zone is symmetric in log space.
		{"the zone's upper edge is 1/(1 − 5 %)", within, benchv1.VerdictIndistinguishable, 0.96, 1.052, true},
		{"±3 % reached", width, benchv1.VerdictSlower, 0.8 / 1.029, 0.8 * 1.029, true},
		{"±3 % not reached, whatever the verdict", width, benchv1.VerdictSlower, 0.8 / 1.031, 0.8 * 1.031, false},
	} {
		if got := Settled(tt.target, tt.verdict, tt.low, tt.high); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	if hw := HalfWidth(0.8/1.05, 0.8*1.05); math.Abs(hw-0.05) > 1e-12 {
		t.Errorf("half-width %v, want 0.05", hw)
	}
}

// TestPilot reads each transport's paired log-ratios from a completed benchmark.
func TestPilot(t *testing.T) {
	tb := benchsim.Completed("pilot", []float64{1000, 1100, 900}, []float64{700, 770, 630}, []float64{500, 600, 400})
	paths := Pilot(tb)
	if len(paths) != 2 || paths[0].Transport != "tls" || paths[0].Pairs != 3 || math.Abs(paths[0].LogMean-math.Log(0.7)) > 1e-9 ||
		paths[0].LogSD > 1e-9 {
		t.Fatalf("paths %+v", paths)
	}
	if p := paths[1]; p.Transport != "ssh" || p.LogSD < 0.05 || math.Abs(p.LogMean-math.Log(0.5)) > 0.02 {
		t.Errorf("ssh %+v", p)
	}
	if got := Pilot(benchsim.Completed("one", []float64{1000}, []float64{700})); len(got) != 0 {
		t.Errorf("one round is no pilot: %+v", got)
	}
}

// TestPlan: a path far from the baseline is planned at the first look, an equal one runs to the
// bound and meets the goal only as often as the design errs, and a half-width is planned at the
// rounds its spread needs.
func TestPlan(t *testing.T) {
	decide := &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
	clear := Plan(decide, 10, []Path{{Transport: "tls", LogMean: math.Log(0.7), LogSD: 0.057}}, 1)
	if clear.Median != 3 || clear.Met < 0.99 {
		t.Errorf("0.7 with a 5.7 %% spread: %s", clear)
	}
	equal := Plan(decide, 6, []Path{{Transport: "again", LogSD: 0.057}}, 1)
	if equal.Median != 6 || equal.Met > 0.08 {
		t.Errorf("an equal path: %s", equal)
	}
	width := Plan(&benchv1.PrecisionTarget{Goal: benchv1.PrecisionHalfWidth, HalfWidthPercent: ptr.To[int32](5)}, 20,
		[]Path{{Transport: "tls", LogMean: math.Log(0.9), LogSD: 0.057}}, 1)
	if width.Median < 8 || width.Median > 16 || width.Met < 0.9 {
		t.Errorf("±5 %% at a 5.7 %% spread: %s", width)
	}
}
