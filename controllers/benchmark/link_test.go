package benchmark

import (
	"strings"
	"testing"
	"time"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
)

// TestRecordLink: each run's measure is kept, the transport's link is the median of them, and a
// link that misses the asked one by more than 20 % is named with both figures.
func TestRecordLink(t *testing.T) {
	asked := benchv1.Link{Emulator: benchv1.EmulatorUserspace, RTT: 10 * time.Millisecond, BitsPerSecond: 50_000_000}
	tests := []struct {
		name     string
		measures []report.Link
		want     benchv1.MeasuredLink
		misses   []string
	}{
		{"on target", []report.Link{{RTTMs: 10.4, ConnectMs: 31, BitsPerSecond: 49_000_000},
			{RTTMs: 10.2, ConnectMs: 30, BitsPerSecond: 49_500_000}, {RTTMs: 11.9, ConnectMs: 40, BitsPerSecond: 48_000_000}},
			benchv1.MeasuredLink{RTTMs: 10.4, ConnectMs: 31, BitsPerSecond: 49_000_000}, nil},
		{"slow path", []report.Link{{RTTMs: 12.5, ConnectMs: 50, BitsPerSecond: 30_000_000}},
			benchv1.MeasuredLink{RTTMs: 12.5, ConnectMs: 50, BitsPerSecond: 30_000_000},
			[]string{"RTT 12.500 ms for 10 ms asked", "bandwidth 30 Mbit/s for 50 Mbit/s asked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &benchv1.TransportResult{}
			for i := range tt.measures {
				out.Runs = append(out.Runs, benchv1.RunResult{Round: int32(i + 1)})
				recordLink(out, asked, "pgbench → server", &tt.measures[i])
			}
			if out.Link == nil || out.Link.Measured == nil || *out.Link.Measured != tt.want {
				t.Fatalf("link %+v, want measured %+v", out.Link, tt.want)
			}
			if out.Link.Asked != (benchv1.LinkFigures{RTTMs: 10, BitsPerSecond: 50_000_000}) || out.Link.Hop != "pgbench → server" {
				t.Errorf("asked %+v hop %q", out.Link.Asked, out.Link.Hop)
			}
			for _, r := range out.Runs {
				if r.Link == nil {
					t.Errorf("run %d kept no measure", r.Round)
				}
			}
			got := linkMisses(out.Link)
			if (got == "") != (len(tt.misses) == 0) {
				t.Fatalf("misses %q, want %v", got, tt.misses)
			}
			for _, m := range tt.misses {
				if !strings.Contains(got, m) {
					t.Errorf("misses %q lack %q", got, m)
				}
			}
		})
	}
	out := &benchv1.TransportResult{Runs: []benchv1.RunResult{{Round: 1}}}
	recordLink(out, benchv1.Link{}, "pgbench → server", nil)
	if out.Link != nil || out.Runs[0].Link != nil {
		t.Errorf("a LAN transport got a link: %+v", out.Link)
	}
}
