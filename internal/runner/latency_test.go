package runner

import (
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/runspec"
)

func TestSamplingRate(t *testing.T) {
	tests := []struct {
		name    string
		load    runspec.Load
		warmTPS float64
		want    float64
	}{
		{"few transactions: all logged", runspec.Load{Clients: 4, Transactions: 1000}, 0, 1},
		{"many transactions: exact share", runspec.Load{Clients: 10, Transactions: 200_000}, 0, 0.25},
		{"short duration, no warm-up", runspec.Load{Duration: 10 * time.Second}, 0, 1},
		{"long duration, no warm-up: sized for the assumed rate", runspec.Load{Duration: 100 * time.Second}, 0, 0.1},
		{"long duration after a warm-up", runspec.Load{Duration: 60 * time.Second}, 10_000, 0.5556},
		{"slow path after a warm-up: all logged", runspec.Load{Duration: 600 * time.Second}, 100, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := samplingRate(tt.load, tt.warmTPS); got != tt.want {
				t.Errorf("samplingRate = %v, want %v", got, tt.want)
			}
		})
	}
}
