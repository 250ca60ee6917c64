package report

import (
	"strings"
	"testing"

	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

func TestEncodeFitsTerminationMessage(t *testing.T) {
	progress := make([]engine.ProgressPoint, 500)
	tests := []struct {
		name   string
		report Report
	}{
		{"long progress is dropped", Report{Result: &engine.Result{TPS: 1, Progress: progress}, Command: "pgbench"}},
		{"long failure is shortened", Report{Failure: &Failure{Reason: "PgbenchError", Message: strings.Repeat("x", 10000)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Encode(tt.report)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > MaxSize {
				t.Fatalf("encoded report is %d bytes, limit %d", len(b), MaxSize)
			}
			got, err := Decode(string(b))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if (got.Result == nil) != (tt.report.Result == nil) || (got.Failure == nil) != (tt.report.Failure == nil) {
				t.Errorf("round trip lost the outcome: %s", b)
			}
		})
	}
}

func TestDecodeRejectsEmpty(t *testing.T) {
	for _, msg := range []string{"", "{}", "Error: OOMKilled"} {
		if _, err := Decode(msg); err == nil {
			t.Errorf("Decode(%q) succeeded", msg)
		}
	}
}

// TestBoundCutsEveryText: every text of a report, however deep, is cut to what status holds, and the
// latency histogram (data, not text) is kept whole.
func TestBoundCutsEveryText(t *testing.T) {
	long := strings.Repeat("x", 50000)
	r := Report{
		Command: long, ServerVersion: long, PgbenchVersion: long,
		Failure: &Failure{Reason: "PgbenchError", Message: "ERROR: " + long},
		Pooler:  &Pooler{ClientTLS: &TLS{Version: long, Cipher: long}, ServerTLS: long},
		Storm:   &Storm{Command: long},
		Latency: &Latency{Histogram: long},
		Probes:  []Probe{{Name: "haproxy", Before: long, After: long}},
	}
	csv := strings.Repeat("postgres,FRONTEND,0\n", 100)
	kept := Report{Probes: []Probe{{Name: "haproxy", Before: csv}}}
	kept.Bound()
	if kept.Probes[0].Before != csv {
		t.Error("a probe's text of a few kB was cut: its transport reads all of it")
	}
	r.Bound()
	seen := 0
	r.Texts(func(field, s string) string {
		seen++
		limit := bounded.Field
		switch field {
		case ".Failure.Message":
			limit = bounded.ReportMessage
		case ".Probes.Before", ".Probes.After":
			limit = MaxProbeText
		}
		if len(s) > limit {
			t.Errorf("%s: %d bytes after Bound, over %d", field, len(s), limit)
		}
		return s
	})
	if seen < 12 {
		t.Errorf("Texts visited %d texts, want every one of the 12 set", seen)
	}
	if r.Latency.Histogram != long {
		t.Errorf("the histogram was cut: it is data, not text")
	}
}
