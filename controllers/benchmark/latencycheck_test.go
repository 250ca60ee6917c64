package benchmark

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/operator/results"
)

// TestLatencyAgainstThroughput: a closed-loop run's cycle is clients ÷ tps; a latency far below it
// (the e2e's select 1 on a saturated node) is flagged, one close to it (the demo's) is not, and an
// open loop or a reconnecting load has no cycle to check.
func TestLatencyAgainstThroughput(t *testing.T) {
	tests := []struct {
		name    string
		rate    *int32
		res     engine.Result
		cycle   *float64
		flagged bool
	}{
		{"the demo: 93 % of the cycle", nil, engine.Result{TPS: 40835, Clients: 4, LatencyAvgMs: 0.093}, ptr.To(0.098), false},
		{"select 1 on a saturated node", nil, engine.Result{TPS: 55799, Clients: 2, LatencyAvgMs: 0.002}, ptr.To(0.036), true},
		{"an open loop's latency counts from the schedule", ptr.To[int32](100),
			engine.Result{TPS: 100, Clients: 4, LatencyAvgMs: 0.5}, nil, false},
		{"reconnect: the cycle holds the connection", nil, engine.Result{TPS: 500, Clients: 1, LatencyAvgMs: 0.2, Reconnect: true},
			nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &benchv1.TunnelBenchmark{}
			tb.Spec.Load.Rate = tt.rate
			run := benchv1.RunResult{Round: 1, LatencyAvgMs: tt.res.LatencyAvgMs, CycleMs: results.CycleMs(tb, &tt.res)}
			if (run.CycleMs == nil) != (tt.cycle == nil) || (tt.cycle != nil && *run.CycleMs != *tt.cycle) {
				t.Fatalf("cycle %v, want %v", ptrOr(run.CycleMs), ptrOr(tt.cycle))
			}
			(&TunnelBenchmarkReconciler{}).warnLatencyInconsistent(tb, "direct", run)
			c := meta.FindStatusCondition(tb.Status.Conditions, conditions.LatencyInconsistent)
			if (c != nil) != tt.flagged || (c != nil && !strings.Contains(c.Message, "0.002 ms")) {
				t.Errorf("condition %+v, want flagged %v", c, tt.flagged)
			}
		})
	}
}

func ptrOr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
