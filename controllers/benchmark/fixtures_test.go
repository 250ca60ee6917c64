package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/operator/runorder"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/testing/benchfixture"
	"github.com/tunnelbench/tunnelbench/test/events"
)

// newBenchmark is a valid benchmark against the CloudNativePG cluster "pg" (benchfixture.New).
func newBenchmark(ns, name string, transports ...benchv1.TransportSpec) *benchv1.TunnelBenchmark {
	return benchfixture.New(ns, name, transports...)
}

// inSpecOrder sets tb's seed to the first one that runs its transports in spec order every round,
// for tests about something else that finish the Jobs one by one; the order's randomness is
// internal/operator/runorder's tests' and the e2e's to check.
func inSpecOrder(tb *benchv1.TunnelBenchmark) *benchv1.TunnelBenchmark {
	n, rounds := len(tb.Spec.Transports), tb.Repetitions()
	var want []runorder.Run
	for r := int32(1); r <= rounds; r++ {
		for t := range n {
			want = append(want, runorder.Run{Transport: t, Round: r})
		}
	}
	if tb.Order() == benchv1.OrderSequential {
		slices.SortStableFunc(want, func(a, b runorder.Run) int { return a.Transport - b.Transport })
	}
	for seed := range int64(1 << 20) {
		if slices.Equal(runorder.Order(1, n, rounds, tb.Order(), seed), want) {
			tb.Spec.Load.Seed = ptr.To(seed)
			return tb
		}
	}
	panic("no seed runs the transports in spec order")
}

// createCNPGSecrets creates a ready CloudNativePG Cluster "pg" and the Secrets CloudNativePG makes
// for it.
func createCNPGSecrets(t *testing.T, ns string) {
	t.Helper()
	createReadyCluster(t, ns, "pg")
	createClusterSecrets(t, ns, "pg")
}

// createReadyCluster plays CloudNativePG: a Cluster whose status says it is ready.
func createReadyCluster(t *testing.T, ns, name string) {
	t.Helper()
	c := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"instances": int64(1), "storage": map[string]any{"size": "1Gi"}}}}
	c.SetGroupVersionKind(specs.CNPGClusterGVK)
	c.SetNamespace(ns)
	c.SetName(name)
	if err := testClient.Create(context.Background(), c); err != nil {
		t.Fatalf("cannot create Cluster %s: %v", name, err)
	}
	markClusterReady(t, c)
}

// markClusterReady sets the status CloudNativePG reports for a healthy cluster.
func markClusterReady(t *testing.T, c *unstructured.Unstructured) {
	t.Helper()
	c.Object["status"] = map[string]any{"phase": "Cluster in healthy state", "instances": int64(1), "readyInstances": int64(1),
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "ClusterIsReady",
			"message": "Cluster is Ready", "lastTransitionTime": "2026-11-22T00:00:00Z"}}}
	if err := testClient.Status().Update(context.Background(), c); err != nil {
		t.Fatalf("cannot mark Cluster %s ready: %v", c.GetName(), err)
	}
}

// createClusterSecrets creates the Secrets CloudNativePG makes for a cluster.
func createClusterSecrets(t *testing.T, ns, cluster string) {
	t.Helper()
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster + "-app"}, Type: corev1.SecretTypeBasicAuth,
			Data: map[string][]byte{"username": []byte("app"), "password": []byte("s3cret-password")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster + "-ca"},
			Data: map[string][]byte{"ca.crt": []byte("-----BEGIN CERTIFICATE-----"), "ca.key": []byte("key")}},
	} {
		if err := testClient.Create(context.Background(), s); err != nil {
			t.Fatalf("cannot create Secret %s: %v", s.Name, err)
		}
	}
}

func getBenchmark(t *testing.T, ns, name string) *benchv1.TunnelBenchmark {
	t.Helper()
	tb := &benchv1.TunnelBenchmark{}
	if err := testClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, tb); err != nil {
		t.Fatalf("cannot get benchmark %s: %v", name, err)
	}
	return tb
}

// waitForJob waits for the Job of a transport to exist.
func waitForJob(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	eventually(t, 15*time.Second, "Job "+name, func() error {
		return testClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, job)
	})
	return job
}

// jobName is the name of a benchmark's Job for a transport's first round.
func jobName(benchmark, transport string) string {
	return roundJobName(benchmark, transport, 1)
}

// roundJobName is the name of a benchmark's Job for a transport's round.
func roundJobName(benchmark, transport string, round int32) string {
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: benchmark}}
	return tb.RunJobName(benchv1.RunRef{Transport: transport, Round: round})
}

func waitForPhase(t *testing.T, ns, name string, phase benchv1.Phase) *benchv1.TunnelBenchmark {
	t.Helper()
	var tb *benchv1.TunnelBenchmark
	eventually(t, 20*time.Second, fmt.Sprintf("benchmark %s in phase %s", name, phase), func() error {
		tb = getBenchmark(t, ns, name)
		if tb.Status.Phase != phase {
			return fmt.Errorf("phase is %q", tb.Status.Phase)
		}
		return nil
	})
	return tb
}

func listJobs(t *testing.T, ns string) []batchv1.Job {
	t.Helper()
	jobs := &batchv1.JobList{}
	if err := testClient.List(context.Background(), jobs, client.InNamespace(ns)); err != nil {
		t.Fatalf("cannot list Jobs: %v", err)
	}
	return jobs.Items
}

// resultReport is the report a runner writes after a successful pgbench run.
func resultReport(tps float64, tls *report.TLS) string {
	stddev := 0.2
	b, _ := json.Marshal(report.Report{
		Result: &engine.Result{
			TPS: tps, LatencyAvgMs: 4000 / tps, LatencyStddevMs: &stddev, ConnectionTimeMs: 12.5,
			Transactions: int64(tps * 10), Clients: 4, Threads: 2,
		},
		TLS:       tls,
		Command:   "pgbench -b select-only -M prepared -c 4 -j 2 -T 10 -P 5",
		StartTime: time.Now().Add(-10 * time.Second).UTC().Truncate(time.Second),
		EndTime:   time.Now().UTC().Truncate(time.Second),
	})
	return string(b)
}

func failureReport(reason, message string) string {
	b, _ := json.Marshal(report.Report{Command: "pgbench", Failure: &report.Failure{Reason: reason, Message: message}})
	return string(b)
}

// finishJob plays the kubelet and the Job controller: it creates the Job's pod with the runner's
// terminated state and termination message, then marks the Job Complete (exit code 0) or Failed.
// testNode and testImageID are where and with what the kubelet played by finishJob ran a runner.
const (
	testNode    = "node-1"
	testImageID = "docker.io/tunnelbench/tunnelbench@sha256:0123456789abcdef"
)

func finishJob(t *testing.T, job *batchv1.Job, exitCode int32, terminationMessage string, podStatus ...func(*corev1.PodStatus)) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: job.Namespace, Name: job.Name + "-pod", Labels: job.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name,
				UID: job.UID, Controller: ptr.To(true)}},
		},
		Spec: job.Spec.Template.Spec,
	}
	pod.Spec.NodeName = testNode
	if err := testClient.Create(ctx, pod); err != nil {
		t.Fatalf("cannot create pod: %v", err)
	}
	if exitCode == 0 && job.Labels[benchv1.LabelRound] != "" && terminationMessage != "" {
		// The runner stores its whole report in the run's result ConfigMap, as well as the
		// short form in its termination message.
		storeReport(t, job, terminationMessage)
	}
	now := metav1.Now()
	phase, reason := corev1.PodSucceeded, "Completed"
	if exitCode != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	pod.Status = corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "runner", Image: pod.Spec.Containers[0].Image, ImageID: testImageID,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, Message: terminationMessage, StartedAt: now, FinishedAt: now,
		}},
	}}}
	for _, mutate := range podStatus {
		mutate(&pod.Status)
	}
	if err := testClient.Status().Update(ctx, pod); err != nil {
		t.Fatalf("cannot update pod status: %v", err)
	}
	setJobFinished(t, job, exitCode == 0, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
}

// storeReport plays the runner writing its report into the run's result ConfigMap, which the
// operator must have created before the Job.
func storeReport(t *testing.T, job *batchv1.Job, rep string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := testClient.Get(context.Background(), types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, cm); err != nil {
		t.Fatalf("the result ConfigMap of Job %s: %v", job.Name, err)
	}
	cm.Data = map[string]string{runspec.ResultKey: rep}
	if err := testClient.Update(context.Background(), cm); err != nil {
		t.Fatalf("cannot store the report: %v", err)
	}
}

// setJobFinished writes a finished Job status the way the Job controller does.
func setJobFinished(t *testing.T, job *batchv1.Job, succeeded bool, failReason, failMessage string) {
	t.Helper()
	ctx := context.Background()
	if err := testClient.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		t.Fatalf("cannot get Job: %v", err)
	}
	now := metav1.Now()
	// The Job controller starts a Job as soon as it sees it.
	job.Status.StartTime = job.CreationTimestamp.DeepCopy()
	if succeeded {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
		}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: failReason, Message: failMessage, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: failReason, Message: failMessage, LastTransitionTime: now},
		}
	}
	if err := testClient.Status().Update(ctx, job); err != nil {
		t.Fatalf("cannot mark Job %s finished: %v", job.Name, err)
	}
}

// assertEvents waits for events of the given reasons about a benchmark; none may carry the
// password of the Secrets the fixtures create.
func assertEvents(t *testing.T, ns, name string, reasons ...string) {
	t.Helper()
	for _, e := range events.Wait(t, testClient, ns, name, 10*time.Second, reasons...) {
		if strings.Contains(e.Note, "s3cret-password") {
			t.Errorf("event %s carries the password", e.Reason)
		}
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// externalServer is a server given by host, with credentials and CA Secrets createExternalSecrets
// makes.
// useExternalServer points a benchmark at the fictional external server db.example. Benchmarks of
// every test share that name across namespaces, and envtest runs no kubelet, so some never end:
// they opt out of the per-server queue (TestOneBenchmarkPerServer tests the queue).
func useExternalServer(tb *benchv1.TunnelBenchmark) {
	tb.Spec.Server = externalServer()
	tb.Spec.Exclusive = ptr.To(false)
}

func externalServer() benchv1.ServerSpec {
	return benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "db.example", Port: 5432, Database: "bench",
		CredentialsSecret: benchv1.LocalObjectReference{Name: "db-creds"},
		CASecret:          &benchv1.LocalObjectReference{Name: "db-ca"}}}
}

func createExternalSecrets(t *testing.T, ns string) {
	t.Helper()
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-creds"}, Type: corev1.SecretTypeBasicAuth,
			Data: map[string][]byte{"username": []byte("bench"), "password": []byte("s3cret-password")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-ca"},
			Data: map[string][]byte{"ca.crt": []byte("-----BEGIN CERTIFICATE-----")}},
	} {
		if err := testClient.Create(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
}

// assertNoJobYet checks for a second that the Job is not created while what it needs is not ready.
func assertNoJobYet(t *testing.T, ns, job, waitingFor string) {
	t.Helper()
	consistently(t, time.Second, "Job "+job+" waits for "+waitingFor, func() error {
		for _, j := range listJobs(t, ns) {
			if j.Name == job {
				return errorf("Job %s created before %s was ready", job, waitingFor)
			}
		}
		return nil
	})
}
