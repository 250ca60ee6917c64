// Package trend is a schedule's history as the points a person reads: each benchmark's figures
// per transport, oldest first, with their intervals and the results found regressed (the change
// points), from the history store or from the benchmarks the schedule keeps.
package trend

import (
	"cmp"
	"slices"
	"time"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/regress"
	"github.com/tunnelbench/tunnelbench/internal/history"
)

// Point is one figure of one transport in one benchmark.
type Point struct {
	Benchmark   string    `json:"benchmark"`
	CompletedAt time.Time `json:"completedAt"`
	Transport   string    `json:"transport"`
	Figure      string    `json:"figure"`
	Value       float64   `json:"value"`
	Low         float64   `json:"low,omitempty"`
	High        float64   `json:"high,omitempty"`
	// Regressed marks a change point: the result was found regressed against those before it.
	Regressed bool `json:"regressed"`
}

// History is a schedule's points and where they came from.
type History struct {
	Namespace string `json:"namespace"`
	Schedule  string `json:"schedule"`
	// Source is "store" or "kept benchmarks".
	Source string  `json:"source"`
	Points []Point `json:"points"`
}

// FromStore is the store's points of a series.
func FromStore(ps []history.Point) []Point {
	out := make([]Point, 0, len(ps))
	for _, p := range ps {
		out = append(out, Point{Benchmark: p.Benchmark, CompletedAt: p.CompletedAt, Transport: p.Transport,
			Figure: p.Figure, Value: p.Value, Low: p.Low, High: p.High, Regressed: p.Regressed})
	}
	sortPoints(out)
	return out
}

// FromBenchmarks is the points of completed benchmarks, each marked as its judgement found it.
func FromBenchmarks(tbs []benchv1.TunnelBenchmark) []Point {
	var out []Point
	for i := range tbs {
		tb := &tbs[i]
		for _, f := range regress.FromBenchmark(tb) {
			for fig, s := range f.Samples {
				out = append(out, Point{Benchmark: tb.Name, CompletedAt: s.At, Transport: f.Transport, Figure: string(fig),
					Value: s.Value, Low: s.Low, High: s.High, Regressed: regressed(tb, f.Transport, string(fig))})
			}
		}
	}
	sortPoints(out)
	return out
}

func regressed(tb *benchv1.TunnelBenchmark, transport, figure string) bool {
	for _, j := range tb.Status.Regression {
		if j.Transport == transport && j.Figure == figure {
			return j.Regressed
		}
	}
	return false
}

// sortPoints orders points by completion, then transport and figure.
func sortPoints(ps []Point) {
	slices.SortStableFunc(ps, func(a, b Point) int {
		if c := a.CompletedAt.Compare(b.CompletedAt); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Transport, b.Transport); c != 0 {
			return c
		}
		return cmp.Compare(a.Figure, b.Figure)
	})
}

// Benchmarks are the benchmarks of the points, in order.
func (h History) Benchmarks() []string {
	var out []string
	for _, p := range h.Points {
		if !slices.Contains(out, p.Benchmark) {
			out = append(out, p.Benchmark)
		}
	}
	return out
}

// Series are the (transport, figure) pairs of the points, in order of first appearance.
func (h History) Series() [][2]string {
	var out [][2]string
	for _, p := range h.Points {
		k := [2]string{p.Transport, p.Figure}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// At is the point of a benchmark's transport figure, if any.
func (h History) At(benchmark string, series [2]string) (Point, bool) {
	for _, p := range h.Points {
		if p.Benchmark == benchmark && p.Transport == series[0] && p.Figure == series[1] {
			return p, true
		}
	}
	return Point{}, false
}
