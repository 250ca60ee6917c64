package engine

import (
	"math"
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		clients, threads, n int
		want                []Share
	}{
		{16, 8, 8, []Share{{2, 1}, {2, 1}, {2, 1}, {2, 1}, {2, 1}, {2, 1}, {2, 1}, {2, 1}}},
		{16, 4, 1, []Share{{16, 4}}},
		{5, 2, 2, []Share{{3, 1}, {2, 1}}},
		{4, 1, 4, []Share{{1, 1}, {1, 1}, {1, 1}, {1, 1}}},
	}
	for _, tt := range tests {
		if got := Split(tt.clients, tt.threads, tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Split(%d, %d, %d) = %v, want %v", tt.clients, tt.threads, tt.n, got, tt.want)
		}
	}
}

func TestAggregate(t *testing.T) {
	a := &Result{TPS: 1000, Transactions: 10000, FailedTransactions: 1, LatencyAvgMs: 2, LatencyStddevMs: ptr(1.0),
		ConnectionTimeMs: 10, Clients: 2, Threads: 1, DurationSeconds: ptr(10.0)}
	b := &Result{TPS: 500, Transactions: 5000, FailedTransactions: 2, LatencyAvgMs: 4, LatencyStddevMs: ptr(2.0),
		ConnectionTimeMs: 20, Clients: 2, Threads: 1, DurationSeconds: ptr(10.2)}
	got := Aggregate([]*Result{a, b})
	if got.TPS != 1500 || got.Transactions != 15000 || got.FailedTransactions != 3 || got.Clients != 4 || got.Threads != 2 {
		t.Errorf("sums: %+v", got)
	}
	// Weighted by transactions: (10000×2 + 5000×4) / 15000.
	if math.Abs(got.LatencyAvgMs-8.0/3) > 1e-9 {
		t.Errorf("latency %v", got.LatencyAvgMs)
	}
	// Pooled: E[x²] = (10000×(1+4) + 5000×(4+16)) / 15000 = 10; var = 10 − (8/3)².
	if want := math.Sqrt(10 - 64.0/9); math.Abs(*got.LatencyStddevMs-want) > 1e-9 {
		t.Errorf("stddev %v, want %v", *got.LatencyStddevMs, want)
	}
	if got.ConnectionTimeMs != 15 || *got.DurationSeconds != 10.2 || got.TPSIncludingConnections != nil {
		t.Errorf("connection %v duration %v incl %v", got.ConnectionTimeMs, *got.DurationSeconds, got.TPSIncludingConnections)
	}
	if Aggregate([]*Result{a}) != a {
		t.Error("one process needs no aggregation")
	}
	b.LatencyStddevMs = nil
	if Aggregate([]*Result{a, b}).LatencyStddevMs != nil {
		t.Error("a stddev is unknown when one process did not report it")
	}
}

// TestAggregateOpenLoop: skipped and late add, the mean lag is weighted by transactions, the
// longest is the longest; closed-loop processes have none.
func TestAggregateOpenLoop(t *testing.T) {
	a := &Result{Transactions: 3000, OpenLoop: &OpenLoop{LagAvgMs: 1, LagMaxMs: 9, Skipped: 5, Late: ptr(int64(7))}}
	b := &Result{Transactions: 1000, OpenLoop: &OpenLoop{LagAvgMs: 5, LagMaxMs: 4, Skipped: 1, Late: ptr(int64(2))}}
	got := Aggregate([]*Result{a, b}).OpenLoop
	if got == nil || got.LagAvgMs != 2 || got.LagMaxMs != 9 || got.Skipped != 6 || got.Late == nil || *got.Late != 9 {
		t.Errorf("open loop %+v", got)
	}
	if Aggregate([]*Result{{Transactions: 1}, {Transactions: 2}}).OpenLoop != nil {
		t.Error("closed-loop processes have no schedule")
	}
}

func TestAggregateSumsProgressByInterval(t *testing.T) {
	a := &Result{Transactions: 10, Progress: []ProgressPoint{{T: 1, TPS: 100, LatencyMs: 1}, {T: 2, TPS: 300, LatencyMs: 2}}}
	b := &Result{Transactions: 10, Progress: []ProgressPoint{{T: 1, TPS: 300, LatencyMs: 3}, {T: 2, TPS: 100, LatencyMs: 4},
		{T: 3, TPS: 50, LatencyMs: 1}}}
	got := Aggregate([]*Result{a, b}).Progress
	want := []ProgressPoint{{T: 1, TPS: 400, LatencyMs: 2.5}, {T: 2, TPS: 400, LatencyMs: 2.5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("progress %+v, want %+v", got, want)
	}
}

func TestDownsample(t *testing.T) {
	var points []ProgressPoint
	for i := 1; i <= 10; i++ {
		points = append(points, ProgressPoint{T: float64(i), TPS: float64(i * 10), LatencyMs: 1})
	}
	tests := []struct {
		max  int
		want []ProgressPoint
	}{
		{20, points},
		{10, points},
		{5, []ProgressPoint{{2, 15, 1}, {4, 35, 1}, {6, 55, 1}, {8, 75, 1}, {10, 95, 1}}},
		// Groups of 3; the last one is shorter.
		{4, []ProgressPoint{{3, 20, 1}, {6, 50, 1}, {9, 80, 1}, {10, 100, 1}}},
		{1, []ProgressPoint{{10, 55, 1}}},
	}
	for _, tt := range tests {
		if got := Downsample(points, tt.max); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Downsample(10 points, %d) = %+v, want %+v", tt.max, got, tt.want)
		}
	}
}
