package runner

import (
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

func TestSamplingRate(t *testing.T) {
	tests := []struct {
		name    string
		load    runspec.Load
		warmTPS float64
		pathTPS float64
		want    float64
	}{
		{"few transactions: all logged", runspec.Load{Clients: 4, Transactions: 1000}, 0, 0, 1},
		{"many transactions: exact share", runspec.Load{Clients: 10, Transactions: 200_000}, 0, 0, 0.25},
		{"short duration, no warm-up", runspec.Load{Duration: 10 * time.Second}, 0, 0, 1},
		{"long duration, no warm-up: sized for the assumed rate", runspec.Load{Duration: 100 * time.Second}, 0, 0, 0.1},
		{"long duration after a warm-up", runspec.Load{Duration: 60 * time.Second}, 10_000, 0, 0.5556},
		{"slow path after a warm-up: all logged", runspec.Load{Duration: 600 * time.Second}, 100, 0, 1},
		// A 350 tps WAN path without a warm-up: sized by its earlier runs, it logs everything
		// (21,000 transactions), where the assumed 50k would have kept 3,500.
		{"slow path, no warm-up, earlier runs", runspec.Load{Duration: 60 * time.Second}, 0, 350, 1},
		{"fast path, no warm-up, earlier runs", runspec.Load{Duration: 60 * time.Second}, 0, 20_000, 0.2778},
		{"a warm-up wins over earlier runs", runspec.Load{Duration: 60 * time.Second}, 10_000, 350, 0.5556},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := samplingRate(tt.load, tt.warmTPS, tt.pathTPS); got != tt.want {
				t.Errorf("samplingRate = %v, want %v", got, tt.want)
			}
		})
	}
}
