package report

import (
	"fmt"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// BenchmarkMergePods is the operator's cost of a run of several runner pods, at the pass that
// records it: decoding and merging the pods' histograms (each about 20,000 latencies spread
// over two decades, as a 10 s run at 2,000 tps logs) and adding up their figures.
func BenchmarkMergePods(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		pods := make([]*Report, n)
		for i := range pods {
			h := hdrhistogram.New(1, 3_600_000_000, 3)
			for j := range 20_000 {
				_ = h.RecordValue(int64(500 + (j*7919)%50_000))
			}
			encoded, err := latency.Encode(h)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
			pods[i] = &Report{Result: &engine.Result{TPS: 2000, Transactions: 20_000, Clients: 4},
				Latency:   &Latency{Histogram: encoded, SamplingRate: 1, Samples: 20_000},
				Window:    &Window{Start: start, End: start.Add(10 * time.Second), Transactions: 20_000, TPS: 2000},
				StartTime: start, EndTime: start.Add(10 * time.Second)}
		}
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := MergePods(pods); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
