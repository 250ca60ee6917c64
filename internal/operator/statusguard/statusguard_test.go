package statusguard

import (
	"math"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func TestFit(t *testing.T) {
	long := func(n int, tail string) string { return strings.Repeat("p", n) + tail }
	withRun := func(run benchv1.RunResult) *benchv1.TunnelBenchmark {
		tb := &benchv1.TunnelBenchmark{}
		tb.Status.Phase = benchv1.PhaseRunning
		tb.Status.Results = []benchv1.TransportResult{{Transport: "direct", Type: benchv1.TransportDirect, Job: "j",
			Repetitions: 1, TPS: 10, Runs: []benchv1.RunResult{run}}}
		return tb
	}
	nan := math.NaN()
	tests := []struct {
		name string
		tb   *benchv1.TunnelBenchmark
		// refused is the field the guard must name; empty: the fitted status is accepted.
		refused string
		check   func(t *testing.T, tb *benchv1.TunnelBenchmark)
	}{
		{
			name: "an 80-character part name is cut to its field's 63, keeping its end",
			tb: withRun(benchv1.RunResult{Round: 1, Job: "j",
				Unmeasured: []benchv1.UnmeasuredPart{{Part: long(80, "-gateway"), Reason: long(300, " because the cgroup is gone")}}}),
			check: func(t *testing.T, tb *benchv1.TunnelBenchmark) {
				u := tb.Status.Results[0].Runs[0].Unmeasured[0]
				if len(u.Part) > 63 || !strings.HasSuffix(u.Part, "-gateway") || !strings.Contains(u.Part, "cut") {
					t.Errorf("part %q (%d bytes): want at most 63, its end kept and the cut said", u.Part, len(u.Part))
				}
				if len(u.Reason) > 256 || !strings.HasSuffix(u.Reason, "because the cgroup is gone") {
					t.Errorf("reason %q (%d bytes): want at most 256 and its end kept", u.Reason, len(u.Reason))
				}
			},
		},
		{
			name: "a limiter's evidence and part are cut",
			tb: withRun(benchv1.RunResult{Round: 1, Job: "j",
				Limiter: &benchv1.Limiter{Part: long(100, ""), Evidence: long(5000, "")}}),
		},
		{
			name: "a condition's message over the API's 32768 is cut",
			tb: func() *benchv1.TunnelBenchmark {
				tb := &benchv1.TunnelBenchmark{}
				tb.Status.Conditions = []metav1.Condition{{Type: "Failed", Status: metav1.ConditionTrue, Reason: "PgbenchError",
					Message: long(40000, ""), LastTransitionTime: metav1.Now()}}
				return tb
			}(),
		},
		{
			name:    "a number JSON cannot carry is named",
			tb:      withRun(benchv1.RunResult{Round: 1, Job: "j", P99Ms: &nan}),
			refused: "status.results[0].runs[0].p99Ms",
		},
		{
			name: "too many unmeasured parts are refused, not silently dropped",
			tb: withRun(benchv1.RunResult{Round: 1, Job: "j",
				Unmeasured: make([]benchv1.UnmeasuredPart, 17)}),
			refused: "status.results[0].runs[0].unmeasured",
		},
		{
			name: "a condition reason that is not a reason is refused",
			tb: func() *benchv1.TunnelBenchmark {
				tb := &benchv1.TunnelBenchmark{}
				tb.Status.Conditions = []metav1.Condition{{Type: "Failed", Status: metav1.ConditionTrue, Reason: "not a reason!",
					LastTransitionTime: metav1.Now()}}
				return tb
			}(),
			refused: "status.conditions[0].reason",
		},
		{
			name: "a schedule's status is checked against its own CRD",
			tb:   nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.tb == nil {
				stb := &benchv1.ScheduledTunnelBenchmark{}
				stb.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Scheduled",
					Message: long(40000, ""), LastTransitionTime: metav1.Now()}}
				if errs := Fit(stb); len(errs) > 0 {
					t.Fatalf("refused: %v", errs)
				}
				if n := len(stb.Status.Conditions[0].Message); n > 32768 {
					t.Fatalf("a schedule's condition message of %d bytes", n)
				}
				return
			}
			errs := Fit(tt.tb)
			if tt.refused == "" {
				if len(errs) > 0 {
					t.Fatalf("the fitted status is refused: %v", errs.ToAggregate())
				}
				if tt.check != nil {
					tt.check(t, tt.tb)
				}
				return
			}
			for _, e := range errs {
				if strings.HasPrefix(e.Field, tt.refused) {
					return
				}
			}
			t.Fatalf("want a refusal naming %s, got %v", tt.refused, errs)
		})
	}
}
