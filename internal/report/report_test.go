package report

import (
	"strings"
	"testing"

	"github.com/tunnelbench/tunnelbench/internal/pgbench"
)

func TestEncodeFitsTerminationMessage(t *testing.T) {
	progress := make([]pgbench.ProgressPoint, 500)
	tests := []struct {
		name   string
		report Report
	}{
		{"long progress is dropped", Report{Result: &pgbench.Result{TPS: 1, Progress: progress}, Command: "pgbench"}},
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
