// Package latency turns pgbench's per-transaction logs (pgbench -l) into HDR histograms, merges
// them across tunnels and repetitions, and reads percentiles from them. Latencies are merged as
// histograms, never averaged: the p99 of two runs is not the mean of their p99s.
package latency

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

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
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{h: hdrhistogram.New(lowestMicros, highestMicros, significant)}
}

// ReadLog reads one pgbench transaction log: lines of
//
//	client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]
//
// where time is the transaction's latency in microseconds, or "failed" or "skipped". A line that
// does not have that shape is an error naming its number: the file is not a pgbench log (or was
// written with --aggregate-interval, whose lines carry sums, not single latencies).
func (r *Recorder) ReadLog(in io.Reader) error {
	sc := bufio.NewScanner(in)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 6 || len(fields) > 8 || !isTimestamp(fields[4], fields[5]) {
			return fmt.Errorf("line %d is not a pgbench transaction log line: %q", n, line)
		}
		switch fields[2] {
		case "failed":
			r.Failed++
			continue
		case "skipped":
			r.Skipped++
			continue
		}
		micros, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || micros < 0 {
			return fmt.Errorf("line %d: the latency %q is not a number of microseconds", n, fields[2])
		}
		r.record(micros)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("while reading a pgbench log: %w", err)
	}
	return nil
}

// isTimestamp reports whether the fields are a Unix time in seconds and its microseconds, as the
// fifth and sixth fields of a transaction log line are (an aggregated log has sums there).
func isTimestamp(seconds, micros string) bool {
	s, err1 := strconv.ParseInt(seconds, 10, 64)
	us, err2 := strconv.ParseInt(micros, 10, 64)
	return err1 == nil && err2 == nil && s >= 1_000_000_000 && us >= 0 && us < 1_000_000
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
