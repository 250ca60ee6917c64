package pgbench

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
