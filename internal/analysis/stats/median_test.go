package stats

import (
	"math"
	"testing"
)

func TestMedianCI(t *testing.T) {
	tests := []struct {
		name      string
		xs        []float64
		low, high float64
		conf      float64
	}{
		{"one sample bounds nothing", []float64{5}, 0, 0, 0},
		{"two: min–max at 50 %", []float64{3, 1}, 1, 3, 0.5},
		{"five: min–max at 93.75 %", []float64{5, 1, 4, 2, 3}, 1, 5, 0.9375},
		{"six: min–max at 96.9 %", []float64{6, 1, 5, 2, 4, 3}, 1, 6, 0.96875},
		// n = 9: k = 2 covers 1 − 2·(1+9)/512 = 0.9609; k = 3 only 0.8203.
		{"nine: second to eighth", []float64{9, 1, 8, 2, 7, 3, 6, 4, 5}, 2, 8, 0.9609375},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MedianCI(tt.xs)
			if got.Low != tt.low || got.High != tt.high || math.Abs(got.Confidence-tt.conf) > 1e-9 || got.N != len(tt.xs) {
				t.Errorf("MedianCI = %+v, want [%v, %v] at %v", got, tt.low, tt.high, tt.conf)
			}
		})
	}
}
