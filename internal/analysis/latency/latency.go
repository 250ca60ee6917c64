// Package latency turns pgbench's per-transaction logs (pgbench -l) into HDR histograms, merges
// them across tunnels and repetitions, and reads percentiles from them. Latencies are merged as
// histograms, never averaged: the p99 of two runs is not the mean of their p99s.
package latency

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The histogram's range and precision: 1 µs (pgbench logs whole microseconds) to one hour, with 3
// significant digits, so that every percentile is within 0.1 % of the exact order statistic. A
// latency above an hour is recorded as an hour and counted in Clamped.
const (
	lowestMicros  = 1
	highestMicros = 3_600_000_000
	significant   = 3
)

// Recorder accumulates transaction latencies.
type Recorder struct {
	h *hdrhistogram.Histogram
	// Failed and Skipped count the log's lines whose time is "failed" (an error ended the
	// transaction) or "skipped" (the latency limit dropped it before it started): they have no
	// latency and are counted, never parsed as numbers.
	Failed, Skipped int64
	// Clamped counts latencies beyond the histogram's range, recorded as its highest value.
	Clamped int64
	// Window, when set, keeps only the transactions that ended within it: the runner pods of one
	// run cut their logs to the stretch all of them were loading the server.
	Window *Span
	// Covered is the stretch the log's transactions covered, window or not: from the first one's
	// start (its end less its latency) to the last one's end. Zero before the first line.
	Covered Span
}

// Span is a stretch of wall-clock time in Unix microseconds, both ends included.
type Span struct{ From, To int64 }

// SpanOf is the span from one time to another.
func SpanOf(from, to time.Time) Span { return Span{From: from.UnixMicro(), To: to.UnixMicro()} }

// Times are the span's ends as times.
func (s Span) Times() (from, to time.Time) {
	return time.UnixMicro(s.From).UTC(), time.UnixMicro(s.To).UTC()
}

// Seconds is the span's length.
func (s Span) Seconds() float64 { return float64(s.To-s.From) / 1e6 }

// Contains reports whether the moment us lies within the span.
func (s Span) Contains(us int64) bool { return us >= s.From && us <= s.To }

// cover widens the span to the moments from and to; a zero span becomes them.
func (s *Span) cover(from, to int64) {
	if *s == (Span{}) {
		*s = Span{From: from, To: to}
		return
	}
	s.From, s.To = min(s.From, from), max(s.To, to)
}

// Common is the stretch every span covers: from the latest start to the earliest end. ok is false
// when there is none (no span, or two that do not overlap).
func Common(spans []Span) (common Span, ok bool) {
	if len(spans) == 0 {
		return Span{}, false
	}
	common = spans[0]
	for _, s := range spans[1:] {
		common.From, common.To = max(common.From, s.From), min(common.To, s.To)
	}
	return common, common.From < common.To
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{h: hdrhistogram.New(lowestMicros, highestMicros, significant)}
}

// ReadLog reads one pgbench transaction log: lines of
//
//	client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]
//
// where time is the transaction's latency in microseconds, or "failed" (with --failures-detailed
// "serialization" or "deadlock") or "skipped". A line that does not have that shape is an error
// naming its number: the file is not a pgbench log (or was written with --aggregate-interval,
// whose lines carry sums, not single latencies).
func (r *Recorder) ReadLog(in io.Reader) error {
	sc := bufio.NewScanner(in)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		end, ok := timestamp(fields)
		if !ok {
			return fmt.Errorf("line %d is not a pgbench transaction log line: %q", n, line)
		}
		micros, numeric := strconv.ParseInt(fields[2], 10, 64)
		if numeric == nil && micros >= 0 {
			r.Covered.cover(end-micros, end)
		} else {
			r.Covered.cover(end, end)
		}
		if r.Window != nil && !r.Window.Contains(end) {
			continue
		}
		switch fields[2] {
		case "failed", "serialization", "deadlock":
			// --failures-detailed names the failure's cause instead of "failed".
			r.Failed++
			continue
		case "skipped":
			r.Skipped++
			continue
		}
		if numeric != nil || micros < 0 {
			return fmt.Errorf("line %d: the latency %q is not a number of microseconds", n, fields[2])
		}
		r.record(micros)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("while reading a pgbench log: %w", err)
	}
	return nil
}

// timestamp is a transaction log line's end, in Unix microseconds, from its fifth and sixth
// fields (a Unix time in seconds and its microseconds); ok is false for a line of another shape
// (an aggregated log has sums there).
func timestamp(fields []string) (us int64, ok bool) {
	if len(fields) < 6 || len(fields) > 8 {
		return 0, false
	}
	s, err1 := strconv.ParseInt(fields[4], 10, 64)
	frac, err2 := strconv.ParseInt(fields[5], 10, 64)
	if err1 != nil || err2 != nil || s < 1_000_000_000 || frac < 0 || frac >= 1_000_000 {
		return 0, false
	}
	return s*1_000_000 + frac, true
}

func (r *Recorder) record(micros int64) {
	if micros > highestMicros {
		micros = highestMicros
		r.Clamped++
	}
	// A 0 µs transaction (below the resolution) counts as the lowest value.
	_ = r.h.RecordValue(max(micros, lowestMicros))
}

// Count is the number of latencies recorded.
func (r *Recorder) Count() int64 { return r.h.TotalCount() }

// Encode renders the histogram in HdrHistogram's compressed V2 format, base64, which any
// HdrHistogram implementation can read back.
func (r *Recorder) Encode() (string, error) {
	return Encode(r.h)
}

// Encode renders a histogram as HdrHistogram's compressed, base64 V2 encoding.
func Encode(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("cannot encode the latency histogram: %w", err)
	}
	return string(b), nil
}

// Merge decodes encoded histograms and adds them up. Empty strings are skipped.
func Merge(encoded ...string) (*hdrhistogram.Histogram, error) {
	total := hdrhistogram.New(lowestMicros, highestMicros, significant)
	for i, e := range encoded {
		if e == "" {
			continue
		}
		h, err := hdrhistogram.Decode([]byte(e))
		if err != nil {
			return nil, fmt.Errorf("histogram %d: %w", i+1, err)
		}
		if dropped := total.Merge(h); dropped > 0 {
			return nil, fmt.Errorf("histogram %d: %d values out of range", i+1, dropped)
		}
	}
	return total, nil
}

// Sample is one run's encoded histogram and the fraction of its transactions it logged.
type Sample struct {
	Encoded string
	Rate    float64
}

// MergeWeighted adds up runs logged at different sampling rates so that each stands for its
// transactions, not its samples: a run that logged one transaction in ten counts each of its
// latencies ten times as much as one that logged them all (counts scaled by the highest rate over
// the run's own, rounded). Merging the samples as they are would weigh the runs by their rates —
// which follow the path's speed, so the slow runs' latencies would count least. It returns the
// histogram and Kish's effective sample size, (Σ wᵢnᵢ)² / Σ wᵢ²nᵢ, the number of equally weighted
// samples the weighted ones are worth: the evidence a percentile rests on.
func MergeWeighted(runs []Sample) (*hdrhistogram.Histogram, float64, error) {
	top := 0.0
	for _, r := range runs {
		top = max(top, r.Rate)
	}
	total := hdrhistogram.New(lowestMicros, highestMicros, significant)
	var sumWN, sumW2N float64
	for i, r := range runs {
		if r.Encoded == "" || r.Rate <= 0 {
			continue
		}
		h, err := hdrhistogram.Decode([]byte(r.Encoded))
		if err != nil {
			return nil, 0, fmt.Errorf("histogram %d: %w", i+1, err)
		}
		w := top / r.Rate
		for _, bar := range h.Distribution() {
			if bar.Count == 0 {
				continue
			}
			if err := total.RecordValues(bar.From, int64(math.Round(float64(bar.Count)*w))); err != nil {
				return nil, 0, fmt.Errorf("histogram %d: %w", i+1, err)
			}
		}
		n := float64(h.TotalCount())
		sumWN, sumW2N = sumWN+w*n, sumW2N+w*w*n
	}
	if sumW2N == 0 {
		return total, 0, nil
	}
	return total, sumWN * sumWN / sumW2N, nil
}

// MinTailSamples is how many samples must lie beyond a percentile for it to be given: with ten,
// the order statistic's 95 % interval spans about the 4th to the 17th largest of them; with fewer
// the figure is one or two transactions' latency, not a percentile. So p99 needs 1,000 samples and
// p99.9 10,000.
const MinTailSamples = 10

// Supported reports whether the quantile q (0.999 for p99.9) rests on at least MinTailSamples of
// n samples.
func Supported(q, n float64) bool {
	return n*(1-q) >= MinTailSamples
}

// Percentiles are a latency distribution's landmarks, in milliseconds.
type Percentiles struct {
	P50, P90, P99, P999, Max float64
	// Count is the number of latencies they summarize.
	Count int64
}

// ErrEmpty is returned for a histogram with no latency in it.
var ErrEmpty = errors.New("no latencies recorded")

// PercentilesOf reads the landmarks of a histogram of microseconds. Each is the highest value
// equivalent to the order statistic (HdrHistogram's convention), so it never understates a tail.
func PercentilesOf(h *hdrhistogram.Histogram) (Percentiles, error) {
	if h.TotalCount() == 0 {
		return Percentiles{}, ErrEmpty
	}
	ms := func(micros int64) float64 { return float64(micros) / 1000 }
	return Percentiles{
		P50: ms(h.ValueAtQuantile(50)), P90: ms(h.ValueAtQuantile(90)), P99: ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)), Max: ms(h.Max()), Count: h.TotalCount(),
	}, nil
}
