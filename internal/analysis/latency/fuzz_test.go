package latency

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadLog: no input makes the log reader panic; what it accepts is counted once per line, and
// the histogram it builds survives its encoding (the form stored in result ConfigMaps).
func FuzzReadLog(f *testing.F) {
	logs, _ := filepath.Glob(filepath.Join("testdata", "*.log"))
	for _, name := range logs {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("0 1 -5 0 1700000000 5\n")
	f.Add("0 1 99999999999999999999 0 1700000000 5\n0 2 skipped 0 1700000000 6 12\n")
	f.Fuzz(func(t *testing.T, log string) {
		r := NewRecorder()
		if err := r.ReadLog(strings.NewReader(log)); err != nil {
			return
		}
		lines := int64(strings.Count(log, "\n") + 1)
		if r.Count()+r.Failed+r.Skipped > lines {
			t.Fatalf("%d latencies, %d failed, %d skipped from %d lines", r.Count(), r.Failed, r.Skipped, lines)
		}
		enc, err := r.Encode()
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		h, err := Merge(enc)
		if err != nil || h.TotalCount() != r.Count() {
			t.Fatalf("the encoded histogram does not decode to its %d values: %v", r.Count(), err)
		}
		if r.Count() > 0 {
			if _, err := PercentilesOf(h); err != nil {
				t.Fatalf("percentiles: %v", err)
			}
		}
	})
}

// FuzzMerge: a stored histogram that is not one (a hand-edited ConfigMap) is an error, never a
// panic.
func FuzzMerge(f *testing.F) {
	r := NewRecorder()
	r.record(120)
	enc, _ := r.Encode()
	f.Add(enc)
	f.Add("HISTFAAAACl4nJNpmSzMwMDAxAABzFCaEUwz2X+AsQE")
	f.Fuzz(func(t *testing.T, encoded string) {
		h, err := Merge(encoded)
		if err == nil && h == nil {
			t.Fatal("no histogram and no error")
		}
	})
}
