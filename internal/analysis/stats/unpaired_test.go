package stats

import (
	"errors"
	"math"
	"testing"
)

func TestUnpairedRatio(t *testing.T) {
	tests := []struct {
		name    string
		a, b    []float64
		verdict Verdict
		est     float64
	}{
		{"twice as fast, tight", []float64{100, 101, 99}, []float64{200, 202, 198}, Faster, 2},
		{"slower", []float64{200, 202, 198}, []float64{100, 101, 99}, Slower, 0.5},
		// ±30 % noise, a 5 % difference: the runs cannot tell.
		{"within the noise", []float64{100, 130, 75}, []float64{105, 80, 128}, Indistinguishable, 0},
		{"one run a side", []float64{100}, []float64{200}, Indistinguishable, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := UnpairedRatio(tt.a, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict() != tt.verdict {
				t.Errorf("verdict %s for %+v", r.Verdict(), r)
			}
			if tt.est != 0 && math.Abs(r.Estimate-tt.est) > 0.01 {
				t.Errorf("estimate %v, want %v", r.Estimate, tt.est)
			}
			if r.HasInterval && !(r.Low <= r.Estimate && r.Estimate <= r.High) {
				t.Errorf("interval %v–%v around %v", r.Low, r.High, r.Estimate)
			}
		})
	}
	// Swapping the sides inverts the ratio and its interval.
	r1, _ := UnpairedRatio([]float64{100, 110, 95}, []float64{150, 160, 140, 155})
	r2, _ := UnpairedRatio([]float64{150, 160, 140, 155}, []float64{100, 110, 95})
	if math.Abs(r1.Estimate*r2.Estimate-1) > 1e-9 || math.Abs(r1.Low*r2.High-1) > 1e-9 {
		t.Errorf("not symmetric: %+v %+v", r1, r2)
	}
	if _, err := UnpairedRatio([]float64{1, 0}, []float64{1}); !errors.Is(err, ErrNotPositive) {
		t.Errorf("zero rate: %v", err)
	}
}
