package benchmark

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// TestTamperedReportsEnd writes, as a tampered runner or anyone who may edit the run's result
// ConfigMap can, reports the schema would refuse as they are: the benchmark ends either way, with
// its server's Lease released. A text past its field is cut and the run kept (an 80-character
// part name left a benchmark Running, every status write refused, 463 s past its 3 min timeout);
// a figure past float64's range, whose summaries are not finite, ends it as InvalidResult naming
// the field, the run left out.
func TestTamperedReportsEnd(t *testing.T) {
	needsEnvtest(t)
	long := strings.Repeat("x", 80)
	tests := []struct {
		name   string
		report string
		phase  benchv1.Phase
		check  func(t *testing.T, tb *benchv1.TunnelBenchmark)
	}{
		{
			name: "an 80-character part name is cut to its field",
			report: `{"command":"pgbench","result":{"tps":100,"transactions":1000,"latencyAvgMs":40,"clients":4,"threads":2},` +
				`"unmeasured":[{"part":"` + long + `-gateway","reason":"` + strings.Repeat("r", 400) + ` its end"}]}`,
			phase: benchv1.PhaseCompleted,
			check: func(t *testing.T, tb *benchv1.TunnelBenchmark) {
				runs := tb.Status.Results[0].Runs
				var part string
				for _, u := range runs[len(runs)-1].Unmeasured {
					if strings.HasSuffix(u.Part, "-gateway") {
						part = u.Part
					}
				}
				if part == "" || len(part) > 63 || !strings.Contains(part, "cut") {
					t.Errorf("unmeasured parts %+v: want the long one cut to 63 with its end kept", runs[len(runs)-1].Unmeasured)
				}
			},
		},
		{
			name: "figures past float64's range end the benchmark as InvalidResult",
			report: `{"command":"pgbench","result":{"tps":1.7e308,"transactions":9000000000000000000,` +
				`"latencyAvgMs":1.7e308,"clients":4,"threads":2}}`,
			phase: benchv1.PhaseFailed,
			check: func(t *testing.T, tb *benchv1.TunnelBenchmark) {
				c := assertCondition(t, tb, conditions.Failed, metav1.ConditionTrue, conditions.ReasonInvalidResult)
				if !strings.Contains(c.Message, "status.results") || !strings.Contains(c.Message, "not a finite number") {
					t.Errorf("the condition does not name the field and what is wrong: %q", c.Message)
				}
				if len(tb.Status.Results) > 0 && len(tb.Status.Results[0].Runs) > 1 {
					t.Errorf("the refused run was kept: %+v", tb.Status.Results[0].Runs)
				}
			},
		},
	}
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := []string{"cut", "nonsense"}[i]
			tb := newBenchmark(ns, name)
			tb.Spec.Load.Repetitions = 2
			if err := testClient.Create(context.Background(), tb); err != nil {
				t.Fatal(err)
			}
			finishJob(t, waitForJob(t, ns, roundJobName(name, "direct", 1)), 0, resultReport(100, nil))
			finishJob(t, waitForJob(t, ns, roundJobName(name, "direct", 2)), 0, tt.report)
			tt.check(t, waitForPhase(t, ns, name, tt.phase))
		})
	}
	assertNoServerLeases(t, ns)
}
