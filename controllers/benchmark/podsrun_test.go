package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// TestRunnerPods: a run of three runner pods is one Indexed Job of three, spread across nodes by
// default, each pod told it is one of three; the operator starts their loads only once all three
// marked themselves ready, then records the run as their sum, with each pod's figures and node.
func TestRunnerPods(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	ctx := context.Background()
	tb := newBenchmark(ns, "pods")
	tb.Spec.Load.Clients, tb.Spec.Load.Threads = 6, 3
	tb.Spec.Runner = &benchv1.RunnerSpec{Pods: 3}
	if err := testClient.Create(ctx, tb); err != nil {
		t.Fatal(err)
	}
	startOperator(t)
	job := waitForJob(t, ns, jobName("pods", "direct"))
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion ||
		ptr.Deref(job.Spec.Completions, 0) != 3 || ptr.Deref(job.Spec.Parallelism, 0) != 3 {
		t.Errorf("Job: completion mode %v, completions %v, parallelism %v", job.Spec.CompletionMode, job.Spec.Completions,
			job.Spec.Parallelism)
	}
	spread := job.Spec.Template.Spec.TopologySpreadConstraints
	if len(spread) != 1 || spread[0].TopologyKey != corev1.LabelHostname || spread[0].WhenUnsatisfiable != corev1.ScheduleAnyway {
		t.Errorf("topology spread %+v", spread)
	}
	args := fmt.Sprint(job.Spec.Template.Spec.Containers[0].Args)
	if !strings.Contains(args, "--pods=3") || !strings.Contains(args, "--clients=6") {
		t.Errorf("runner told %s", args)
	}
	key := types.NamespacedName{Namespace: ns, Name: job.Name}
	setData := func(kv map[string]string) {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := testClient.Get(ctx, key, cm); err != nil {
			t.Fatal(err)
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		for k, v := range kv {
			cm.Data[k] = v
		}
		if err := testClient.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	startOf := func() string {
		cm := &corev1.ConfigMap{}
		if err := testClient.Get(ctx, key, cm); err != nil {
			t.Fatal(err)
		}
		return cm.Data[runspec.StartKey]
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	setData(map[string]string{runspec.ReadyKey(0): now, runspec.ReadyKey(2): now})
	consistently(t, 2*time.Second, "no start while pod 1 is not ready", func() error {
		if s := startOf(); s != "" {
			return fmt.Errorf("started at %s", s)
		}
		return nil
	})
	setData(map[string]string{runspec.ReadyKey(1): now})
	eventually(t, 20*time.Second, "the pods' common start", func() error {
		if startOf() == "" {
			return fmt.Errorf("not started")
		}
		return nil
	})
	finishIndexedJob(t, job, []float64{210, 190, 200})
	done := waitForPhase(t, ns, "pods", benchv1.PhaseCompleted)
	r := done.Status.Result("direct")
	if r == nil || r.TPS != 600 || r.Transactions != 6000 || len(r.Runs[0].Pods) != 3 {
		t.Fatalf("result %+v", r)
	}
	for i, p := range r.Runs[0].Pods {
		if p.Index != int32(i) || p.Node != "node-"+strconv.Itoa(i) || p.TPS != []float64{210, 190, 200}[i] {
			t.Errorf("pod %d: %+v", i, p)
		}
	}
	if r.Runs[0].Pods[1].StartOffsetMs != 10 {
		t.Errorf("pod 1 started %.0f ms after the first, want 10", r.Runs[0].Pods[1].StartOffsetMs)
	}
}

// finishIndexedJob plays the kubelets and the Job controller for a run of len(tps) pods: pod i on
// node-i stores its report (tps[i], 10 s; pod 1 starting 10 ms after the others) under its own key, and
// the Job completes.
func finishIndexedJob(t *testing.T, job *batchv1.Job, tps []float64) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{}
	if err := testClient.Get(ctx, client.ObjectKeyFromObject(job), cm); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-10 * time.Second).UTC().Truncate(time.Second)
	for i, x := range tps {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: fmt.Sprintf("%s-%d", job.Name, i),
				Labels:      job.Spec.Template.Labels,
				Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(i)},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name,
					UID: job.UID, Controller: ptr.To(true)}}},
			Spec: job.Spec.Template.Spec,
		}
		pod.Spec.NodeName = "node-" + strconv.Itoa(i)
		if err := testClient.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		offset := time.Duration(0)
		if i == 1 {
			offset = 10 * time.Millisecond
		}
		rep, _ := json.Marshal(report.Report{
			Result:  &engine.Result{TPS: x, Transactions: int64(x * 10), LatencyAvgMs: 2000 / x, Clients: 2, Threads: 1},
			Command: "pgbench -n -f script.sql -c 6 -j 3 -T 10", StartTime: start.Add(offset),
			EndTime: start.Add(offset + 10*time.Second),
		})
		cm.Data[runspec.ReportKey(len(tps), i)] = string(rep)
	}
	if err := testClient.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := testClient.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	job.Status.StartTime = job.CreationTimestamp.DeepCopy()
	job.Status.Succeeded, job.Status.CompletedIndexes = int32(len(tps)), fmt.Sprintf("0-%d", len(tps)-1)
	job.Status.CompletionTime = &now
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
	}
	if err := testClient.Status().Update(ctx, job); err != nil {
		t.Fatalf("cannot complete Job %s: %v", job.Name, err)
	}
}
