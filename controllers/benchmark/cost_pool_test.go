package benchmark

import (
	"strings"
	"testing"
	"time"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// TestDecideCostsNamesAnExhaustedPool: a pooler's clients waiting for its server connections are
// the limiter, before the link; a pool with room is not, and the link is then named.
func TestDecideCostsNamesAnExhaustedPool(t *testing.T) {
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		wait float64
		want string
	}{
		{"4 clients over 2 connections, waiting half their time", 3.96, "mysqlpool"},
		{"clients that hardly waited", 0.01, "network"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := &report.Report{
				Result:    &engine.Result{TPS: 340, LatencyAvgMs: 11.7, Transactions: 680, Clients: 4, Threads: 4},
				Pooler:    &report.Pooler{Counted: true, Part: "mysqlpool", WaitCounted: true, WaitSeconds: tt.wait, ServerConnections: 2},
				Link:      &report.Link{RTTMs: 10.5},
				StartTime: start, EndTime: start.Add(2 * time.Second),
			}
			_, limiter := decideCosts(rep, nil, "n1", 2, nil, func([]benchv1.PartCost) []benchv1.UnmeasuredPart { return nil })
			if limiter == nil || limiter.Part != tt.want {
				t.Fatalf("limiter %+v, want %s", limiter, tt.want)
			}
			if tt.want == "mysqlpool" && !strings.Contains(limiter.Evidence, "2 server connections") {
				t.Errorf("evidence %q", limiter.Evidence)
			}
		})
	}
}
