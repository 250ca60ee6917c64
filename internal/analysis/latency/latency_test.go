package latency

import (
	"errors"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// exactMillis is the direct computation the histogram approximates: the logged latencies, sorted.
func exactMillis(t *testing.T, path string) (sorted []float64, failed, skipped int64) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(line)
		switch f[2] {
		case "failed":
			failed++
		case "skipped":
			skipped++
		default:
			us, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			sorted = append(sorted, us/1000)
		}
	}
	slices.Sort(sorted)
	return sorted, failed, skipped
}

// rank is the nearest-rank percentile of sorted values, HdrHistogram's definition.
func rank(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q/100*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// TestRealPgbenchLogs reads logs written by real pgbench 15 (testdata/README.md) and checks the
// histogram's percentiles against the sorted latencies, and the failed and skipped counts against
// the lines that carry them.
func TestRealPgbenchLogs(t *testing.T) {
	tests := []struct {
		file            string
		failed, skipped int64
	}{
		{"pg15-select-only.log", 0, 0},
		{"pg15-serialization-failures.log", 118, 0}, // pgbench's summary said 118 failed
		{"pg15-rate-limit-skipped.log", 0, 50},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := "testdata/" + tt.file
			want, failed, skipped := exactMillis(t, path)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			r := NewRecorder()
			if err := r.ReadLog(f); err != nil {
				t.Fatal(err)
			}
			if r.Failed != tt.failed || r.Skipped != tt.skipped || failed != tt.failed || skipped != tt.skipped {
				t.Errorf("failed %d skipped %d, want %d and %d", r.Failed, r.Skipped, tt.failed, tt.skipped)
			}
			encoded, err := r.Encode()
			if err != nil {
				t.Fatal(err)
			}
			h, err := Merge(encoded)
			if err != nil {
				t.Fatal(err)
			}
			p, err := PercentilesOf(h)
			if err != nil {
				t.Fatal(err)
			}
			if p.Count != int64(len(want)) {
				t.Errorf("count %d, want %d", p.Count, len(want))
			}
			for _, c := range []struct {
				name string
				got  float64
				q    float64
			}{{"p50", p.P50, 50}, {"p90", p.P90, 90}, {"p99", p.P99, 99}, {"p99.9", p.P999, 99.9}, {"max", p.Max, 100}} {
				exact := rank(want, c.q)
				// 3 significant digits, plus the histogram's 1 µs floor.
				if math.Abs(c.got-exact) > exact*0.001+0.001 {
					t.Errorf("%s = %.3f ms, exact %.3f ms", c.name, c.got, exact)
				}
			}
			if !(p.P50 <= p.P90 && p.P90 <= p.P99 && p.P99 <= p.P999 && p.P999 <= p.Max) {
				t.Errorf("percentiles out of order: %+v", p)
			}
		})
	}
}

// TestMergeIsNotAnAverage: merging two runs' histograms gives the percentiles of all their
// latencies together, which averaging the runs' percentiles would not.
func TestMergeIsNotAnAverage(t *testing.T) {
	fast, slow := NewRecorder(), NewRecorder()
	for i := range 900 {
		fast.record(int64(1000 + i)) // 1.000–1.899 ms
	}
	for i := range 100 {
		slow.record(int64(50_000 + i)) // 50 ms
	}
	a, _ := fast.Encode()
	b, _ := slow.Encode()
	h, err := Merge(a, "", b)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := PercentilesOf(h)
	// 1000 latencies, the slowest 100 at 50 ms: p90 is the 900th (1.899 ms), p99 is slow.
	if p.Count != 1000 || math.Abs(p.P90-1.899) > 0.002 || p.P99 < 50 || p.P99 > 50.2 {
		t.Errorf("merged percentiles %+v", p)
	}
}

// TestMergeWeighted: a run that logged one transaction in ten counts each sample ten times, so
// two runs of 1,000 transactions each weigh alike however they were sampled; with equal rates it
// is Merge; the effective sample size says what the weighted samples are worth.
func TestMergeWeighted(t *testing.T) {
	all, sampled := NewRecorder(), NewRecorder()
	for i := range 1000 {
		all.record(int64(1000 + i%10)) // 1 ms, every transaction logged
	}
	for i := range 100 {
		sampled.record(int64(10_000 + i%10)) // 10 ms, one in ten logged
	}
	a, _ := all.Encode()
	b, _ := sampled.Encode()
	tests := []struct {
		name      string
		runs      []Sample
		p75       float64
		effective float64
	}{
		// Weighted, the 10 ms run is half of the transactions: p75 lies in it. As samples it would
		// be a tenth of them, and p75 at 1 ms.
		{"one run sampled", []Sample{{a, 1}, {b, 0.1}}, 10, 2000.0 * 2000 / (1000 + 100*100)},
		{"the same rate", []Sample{{a, 0.5}, {b, 0.5}}, 1, 1100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, effective, err := MergeWeighted(tt.runs)
			if err != nil {
				t.Fatal(err)
			}
			if got := float64(h.ValueAtQuantile(75)) / 1000; math.Abs(got-tt.p75) > tt.p75*0.01 {
				t.Errorf("p75 %.3f ms, want %.0f", got, tt.p75)
			}
			if math.Abs(effective-tt.effective) > 0.01 {
				t.Errorf("effective samples %.2f, want %.2f", effective, tt.effective)
			}
		})
	}
	same, _, _ := MergeWeighted([]Sample{{a, 1}, {b, 1}})
	plain, _ := Merge(a, b)
	if !same.Equals(plain) {
		t.Error("equal rates must merge as Merge does")
	}
}

// TestSupported: a percentile needs ten samples beyond it.
func TestSupported(t *testing.T) {
	tests := []struct {
		q, n float64
		want bool
	}{
		{0.99, 1000, true}, {0.99, 999, false}, {0.999, 10_000, true}, {0.999, 3500, false}, {0.5, 20, true}, {0.9, 99, false},
	}
	for _, tt := range tests {
		if got := Supported(tt.q, tt.n); got != tt.want {
			t.Errorf("Supported(%v, %v) = %v", tt.q, tt.n, got)
		}
	}
}

func TestReadLogRejectsWhatIsNotALog(t *testing.T) {
	for name, in := range map[string]string{
		"progress line":          "progress: 5.0 s, 27015.6 tps, lat 0.147 ms stddev 0.046, 0 failed\n",
		"aggregate-interval log": "1795487539 100 120000 150000000 100 5000\n",
		"latency not a number":   "0 1 1.5e3 0 1795487539 468757\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := NewRecorder().ReadLog(strings.NewReader(in)); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestClampAndEmpty(t *testing.T) {
	r := NewRecorder()
	if _, err := PercentilesOf(r.h); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	r.record(highestMicros * 2)
	r.record(0)
	if r.Clamped != 1 || r.Count() != 2 {
		t.Errorf("clamped %d count %d", r.Clamped, r.Count())
	}
}

func TestMergeRejectsGarbage(t *testing.T) {
	if _, err := Merge("not a histogram"); err == nil {
		t.Error("accepted")
	}
}

// TestWindowCut cuts a real log to a window: only the transactions that ended within it are
// counted (checked line by line), and the covered span runs from the first one's start to the
// last one's end whatever the window.
func TestWindowCut(t *testing.T) {
	raw, err := os.ReadFile("testdata/pg15-select-only.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var ends, starts []int64
	for _, line := range lines {
		f := strings.Fields(line)
		s, _ := strconv.ParseInt(f[4], 10, 64)
		us, _ := strconv.ParseInt(f[5], 10, 64)
		lat, _ := strconv.ParseInt(f[2], 10, 64)
		ends, starts = append(ends, s*1e6+us), append(starts, s*1e6+us-lat)
	}
	covered := Span{From: slices.Min(starts), To: slices.Max(ends)}
	mid := (covered.From + covered.To) / 2
	tests := []struct {
		name   string
		window *Span
	}{
		{"no window", nil},
		{"all of it", &covered},
		{"first half", &Span{From: covered.From, To: mid}},
		{"second half", &Span{From: mid + 1, To: covered.To}},
		{"before it", &Span{From: covered.From - 10, To: covered.From - 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := NewRecorder()
			rec.Window = tt.window
			if err := rec.ReadLog(strings.NewReader(string(raw))); err != nil {
				t.Fatal(err)
			}
			var want int64
			for _, end := range ends {
				if tt.window == nil || tt.window.Contains(end) {
					want++
				}
			}
			if rec.Count() != want || rec.Covered != covered {
				t.Errorf("counted %d of %d covering %+v, want %d covering %+v", rec.Count(), len(lines), rec.Covered,
					want, covered)
			}
		})
	}
}

func TestCommon(t *testing.T) {
	tests := []struct {
		name  string
		spans []Span
		want  Span
		ok    bool
	}{
		{"none", nil, Span{}, false},
		{"one", []Span{{10, 20}}, Span{10, 20}, true},
		{"latest start, earliest end", []Span{{10, 30}, {12, 40}, {11, 25}}, Span{12, 25}, true},
		{"apart", []Span{{10, 20}, {21, 30}}, Span{21, 20}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Common(tt.spans)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("Common(%v) = %v, %v, want %v, %v", tt.spans, got, ok, tt.want, tt.ok)
			}
		})
	}
}
