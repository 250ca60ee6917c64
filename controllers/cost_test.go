package controllers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/report"
)

// cpuReport is a result whose runner container used cpu, and a tunnel sidecar 0.5 s, over a 10 s
// window of 20,000 transactions.
func cpuReport(cpu report.CPU) string {
	b, _ := json.Marshal(report.Report{
		Result:    &pgbench.Result{TPS: 2000, LatencyAvgMs: 2, Transactions: 20_000, Clients: 4, Threads: 2},
		CPU:       &cpu,
		Sidecars:  []report.SidecarCPU{{Part: "tunnel-0", CPU: report.CPU{UserSeconds: 0.4, SystemSeconds: 0.1, WindowSeconds: 10}}},
		Command:   "pgbench -S -T 10",
		StartTime: time.Now().Add(-10 * time.Second).UTC().Truncate(time.Second),
		EndTime:   time.Now().UTC().Truncate(time.Second),
	})
	return string(b)
}

// TestRunCostInStatus: a run's client cost, and its sidecars', reach status with their figures; under a 200m CPU limit
// a client at 95 % of it is the run's limiter, with the evidence; without a limit and with no node
// to read (envtest has none) the utilization is unknown and no limiter is named.
func TestRunCostInStatus(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	tests := []struct {
		name    string
		limit   string
		cpu     report.CPU
		limiter string
	}{
		{"starved under a 200m limit", "200m", report.CPU{UserSeconds: 1.5, SystemSeconds: 0.4, WindowSeconds: 10,
			Periods: 100, Throttled: 5, ThrottledSeconds: 0.2, CgroupVersion: 1}, "client used 95% of the 0.2 cores"},
		{"no limit, no node known", "", report.CPU{UserSeconds: 1.5, SystemSeconds: 0.4, WindowSeconds: 10, CgroupVersion: 2}, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newBenchmark(ns, []string{"starved", "roomy"}[i])
			tb.Spec.Load.Repetitions = 1
			if tt.limit != "" {
				tb.Spec.Runner = &benchv1.RunnerSpec{Resources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(tt.limit)},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(tt.limit)}}}
			}
			if err := testClient.Create(context.Background(), tb); err != nil {
				t.Fatal(err)
			}
			finishJob(t, waitForJob(t, ns, jobName(tb.Name, "direct")), 0, cpuReport(tt.cpu))
			done := waitForPhase(t, ns, tb.Name, benchv1.PhaseCompleted)
			run := done.Status.Result("direct").Runs[0]
			if len(run.Cost) != 2 || run.Cost[0].Part != benchv1.PartClient || run.Cost[0].CPUSeconds != 1.9 ||
				run.Cost[0].CPUMicrosPerTransaction == nil || *run.Cost[0].CPUMicrosPerTransaction != 95 ||
				run.Cost[1].Part != "tunnel-0" || *run.Cost[1].CPUMicrosPerTransaction != 25 {
				t.Fatalf("cost %+v", run.Cost)
			}
			switch {
			case tt.limiter == "" && (run.Limiter != nil || run.Cost[0].Utilization != nil):
				t.Errorf("limiter %+v, utilization %v: want neither", run.Limiter, run.Cost[0].Utilization)
			case tt.limiter != "" && (run.Limiter == nil || !strings.Contains(run.Limiter.Evidence, tt.limiter) ||
				*run.Cost[0].ThrottledFraction != 0.05):
				t.Errorf("limiter %+v, cost %+v: want %q", run.Limiter, run.Cost[0], tt.limiter)
			}
			bound := meta.FindStatusCondition(done.Status.Conditions, ConditionClientBound)
			if (bound != nil) != (tt.limiter != "") || bound != nil && !strings.Contains(bound.Message, "spec.runner.resources") {
				t.Errorf("ClientBound %+v, want it exactly when the client is the limiter", bound)
			}
		})
	}
}
