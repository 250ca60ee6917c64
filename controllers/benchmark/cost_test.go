package benchmark

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// cpuReport is a result whose runner container used cpu, and a tunnel sidecar 0.5 s, over a 10 s
// window of 20,000 transactions.
func cpuReport(cpu report.CPU) string {
	b, _ := json.Marshal(report.Report{
		Result:    &engine.Result{TPS: 2000, LatencyAvgMs: 2, Transactions: 20_000, Clients: 4, Threads: 2},
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
			// envtest runs no pods: the CloudNativePG primary is not seen, and the run says so.
			if len(run.Unmeasured) != 1 || run.Unmeasured[0].Part != benchv1.PartServer ||
				!strings.Contains(run.Unmeasured[0].Reason, "primary is not running") {
				t.Errorf("unmeasured %+v", run.Unmeasured)
			}
			bound := meta.FindStatusCondition(done.Status.Conditions, conditions.ClientBound)
			if (bound != nil) != (tt.limiter != "") || bound != nil && !strings.Contains(bound.Message, "spec.runner.resources") {
				t.Errorf("ClientBound %+v, want it exactly when the client is the limiter", bound)
			}
		})
	}
}

// TestServerPart: where the runner asks for the server's CPU, decided from the server's pod and
// the node readers as observed, and why it cannot when it cannot.
func TestServerPart(t *testing.T) {
	const uid = "0f3c2a9e-5b7d-4c1e-9a2b-3d4e5f6a7b8c"
	server := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pg-1", UID: uid}, Spec: corev1.PodSpec{NodeName: "n2"}}
	reader := func(node, ip string, ready corev1.ConditionStatus) corev1.Pod {
		return corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{PodIP: ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
	}
	tests := []struct {
		name      string
		namespace string
		view      serverView
		want      runspec.CPUPart
		why       string
	}{
		{"no pod seen", "tb-system", serverView{noPod: "the server db.example.com is not a Service"}, runspec.CPUPart{},
			"is not a Service"},
		{"no readers run", "", serverView{pod: server}, runspec.CPUPart{}, "nodeReader.enabled"},
		{"a reader on another node only", "tb-system", serverView{pod: server,
			readers: []corev1.Pod{reader("n1", "10.0.0.5", corev1.ConditionTrue)}}, runspec.CPUPart{}, "no ready node reader runs on node n2"},
		{"the node's reader not ready", "tb-system", serverView{pod: server,
			readers: []corev1.Pod{reader("n2", "10.0.1.5", corev1.ConditionFalse)}}, runspec.CPUPart{}, "no ready node reader"},
		{"the node's reader", "tb-system", serverView{pod: server, readers: []corev1.Pod{reader("n1", "10.0.0.5", corev1.ConditionTrue),
			reader("n2", "10.0.1.5", corev1.ConditionTrue)}},
			runspec.CPUPart{Name: benchv1.PartServer, Host: "10.0.1.5", Port: runspec.NodeReaderPort, Pod: uid}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &TunnelBenchmarkReconciler{NodeReaderNamespace: tt.namespace}
			got, why := r.serverPart(tt.view)
			if got != tt.want || (tt.why == "") != (why == "") || !strings.Contains(why, tt.why) {
				t.Errorf("serverPart = %+v, %q; want %+v, %q", got, why, tt.want, tt.why)
			}
		})
	}
}

// TestNodeContentionInStatus: a runner and a server on one 2-core node that used 96 % of it together
// — neither alone near its share — make the node the run's limiter, with ClientBound
// (NodeContention) saying so; the server's part has the node's cores, and the run its nodes.
func TestNodeContentionInStatus(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode}}
	if err := testClient.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testClient.Delete(context.Background(), node) })
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	if err := testClient.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	primary := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-1",
			Labels: map[string]string{"cnpg.io/cluster": "pg", "cnpg.io/instanceRole": "primary"}},
		Spec: corev1.PodSpec{NodeName: testNode, Containers: []corev1.Container{{Name: "postgres", Image: "postgres"}}},
	}
	if err := testClient.Create(ctx, primary); err != nil {
		t.Fatal(err)
	}
	tb := newBenchmark(ns, "crowded")
	tb.Spec.Load.Repetitions = 1
	if err := testClient.Create(ctx, tb); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(report.Report{
		Result: &engine.Result{TPS: 2000, LatencyAvgMs: 2, Transactions: 20_000, Clients: 4, Threads: 2},
		CPU:    &report.CPU{UserSeconds: 6, SystemSeconds: 1.4, WindowSeconds: 10, CgroupVersion: 1},
		Sidecars: []report.SidecarCPU{{Part: benchv1.PartServer, Remote: true,
			CPU: report.CPU{UserSeconds: 9, SystemSeconds: 2.8, WindowSeconds: 10, CgroupVersion: 1}}},
		Command: "pgbench -S -T 10", StartTime: time.Now().Add(-10 * time.Second).UTC().Truncate(time.Second),
		EndTime: time.Now().UTC().Truncate(time.Second),
	})
	job := waitForJob(t, ns, jobName(tb.Name, "direct"))
	finishJob(t, job, 0, string(b))
	done := waitForPhase(t, ns, tb.Name, benchv1.PhaseCompleted)
	run := done.Status.Result("direct").Runs[0]
	if run.Limiter == nil || run.Limiter.Part != benchv1.PartNode ||
		!strings.Contains(run.Limiter.Evidence, "used 96% of its 2 cores together (client 37%, server 59%") {
		t.Errorf("limiter %+v", run.Limiter)
	}
	if len(run.Cost) != 2 || run.Cost[1].Part != benchv1.PartServer || run.Cost[1].Cores == nil || *run.Cost[1].Cores != 2 ||
		run.Node != testNode || run.ServerNode != testNode {
		t.Errorf("cost %+v, nodes %q %q", run.Cost, run.Node, run.ServerNode)
	}
	bound := assertCondition(t, done, conditions.ClientBound, metav1.ConditionTrue, "NodeContention")
	if !strings.Contains(bound.Message, "spec.runner.affinity") {
		t.Errorf("ClientBound %q", bound.Message)
	}
}
