package regress

import (
	"math"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
)

// FigureThroughput is a bulk copy's MB/s. Lower is worse.
const FigureThroughput Figure = "throughput"

// Figures are one transport's samples of a finished benchmark, by figure.
type Figures struct {
	Transport string
	Samples   map[Figure]Sample
}

// AbsoluteFigure is the figure that describes a benchmark's load on its own: its mean latency for
// an open loop (whose tps is the rate asked), MB/s for a copy, else tps.
func AbsoluteFigure(tb *benchv1.TunnelBenchmark) Figure {
	switch {
	case tb.Spec.Load.Copy != nil:
		return FigureThroughput
	case tb.Spec.Load.Rate != nil:
		return FigureLatency
	}
	return FigureTPS
}

// FromBenchmark is what a completed benchmark without a sweep measured, per transport in status
// order: the absolute figure (the median of its counted rounds, with the median's interval) and,
// for every transport but the baseline, the paired ratio to the baseline over the rounds both
// ran (with its 95 % interval). A transport without a counted round has no samples.
func FromBenchmark(tb *benchv1.TunnelBenchmark) []Figures {
	if tb.Status.Phase != benchv1.PhaseCompleted || tb.Spec.Sweep != nil || len(tb.Status.Results) == 0 || len(tb.Spec.Transports) == 0 {
		return nil
	}
	at := tb.CreationTimestamp.Time
	if tb.Status.CompletionTime != nil {
		at = tb.Status.CompletionTime.Time
	}
	abs := AbsoluteFigure(tb)
	// The baseline is the spec's first transport, wherever its result sits in status.
	base := tb.Status.Result(tb.Spec.Transports[0].Name)
	var out []Figures
	for i := range tb.Status.Results {
		r := &tb.Status.Results[i]
		f := Figures{Transport: r.Transport, Samples: map[Figure]Sample{}}
		if s, ok := absolute(r, abs); ok {
			s.Benchmark, s.At = tb.Name, at
			f.Samples[abs] = s
		}
		if base != nil && r.Transport != base.Transport {
			if s, ok := pairedRatio(base, r); ok {
				s.Benchmark, s.At = tb.Name, at
				f.Samples[FigureRatio] = s
			}
		}
		if len(f.Samples) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// absolute is the median of r's counted rounds in fig, with the median's distribution-free
// interval.
func absolute(r *benchv1.TransportResult, fig Figure) (Sample, bool) {
	var xs []float64
	for _, run := range r.Runs {
		if !run.Counted() {
			continue
		}
		v := run.Figure()
		if fig == FigureLatency {
			v = run.LatencyAvgMs
		}
		if v > 0 && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return Sample{}, false
	}
	s := Sample{Value: stats.Median(xs)}
	if ci := stats.MedianCI(xs); ci.N >= 2 {
		s.Low, s.High = ci.Low, ci.High
	}
	return s, true
}

// pairedRatio is r's paired ratio to base over the rounds both counted.
func pairedRatio(base, r *benchv1.TransportResult) (Sample, bool) {
	b, c := benchv1.PairedFigures(base, r)
	ratio, err := stats.PairedRatio(b, c)
	if err != nil || len(b) == 0 {
		return Sample{}, false
	}
	s := Sample{Value: ratio.Estimate}
	if ratio.HasInterval {
		s.Low, s.High = ratio.Low, ratio.High
	}
	return s, true
}
