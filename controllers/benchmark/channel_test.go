package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/testing/benchfixture"
)

// bigReport is a run's whole report, far beyond a termination message's 4 KiB: latencies from
// 1 µs·scale to 1000 µs·scale (one each), and 1000 progress points.
func bigReport(t *testing.T, tps float64, scale int) (string, string) {
	t.Helper()
	hist, samples := benchfixture.Histogram(t, 1000, func(i int) int64 { return int64(i * scale) })
	progress := benchfixture.Progress(1000, func(i int) float64 { return tps + float64(i%7) })
	rep := report.Report{
		Result:  &engine.Result{TPS: tps, LatencyAvgMs: 0.5, Transactions: 1000, Clients: 4, Threads: 2, Progress: progress},
		Latency: &report.Latency{Histogram: hist, SamplingRate: 1, Samples: samples},
		Command: "pgbench -b select-only", StartTime: time.Now().Add(-time.Minute).UTC(), EndTime: time.Now().UTC(),
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) <= report.MaxSize {
		t.Fatalf("the test's report is only %d bytes", len(b))
	}
	return string(b), hist
}

// TestResultsChannel: each run stores its whole report in a ConfigMap the operator made for it,
// through a ServiceAccount that may write exactly those ConfigMaps; the operator reads reports far
// larger than a termination message from there (with no termination message at all), merges the
// runs' latency histograms and keeps the series bounded; once the benchmark ends the runner's API
// access is removed and the results stay.
func TestResultsChannel(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	ctx := context.Background()
	tb := newBenchmark(ns, "channel")
	tb.Spec.Load.Repetitions = 2
	if err := testClient.Create(ctx, tb); err != nil {
		t.Fatal(err)
	}
	startOperator(t)
	job := waitForJob(t, ns, roundJobName("channel", "direct", 1))
	account := getBenchmark(t, ns, "channel").RunnerAccountName()

	// The runner's least privilege: get and patch on this benchmark's result ConfigMaps, by name.
	role := &rbacv1.Role{}
	if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: account}, role); err != nil {
		t.Fatal(err)
	}
	wantNames := []string{roundJobName("channel", "direct", 1), roundJobName("channel", "direct", 2)}
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Verbs, []string{"get", "patch"}) ||
		!slices.Equal(role.Rules[0].Resources, []string{"configmaps"}) || !slices.Equal(role.Rules[0].ResourceNames, wantNames) {
		t.Errorf("role rules %+v", role.Rules)
	}
	binding := &rbacv1.RoleBinding{}
	if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: account}, binding); err != nil ||
		binding.RoleRef.Name != account || binding.Subjects[0].Name != account {
		t.Errorf("role binding %+v (%v)", binding, err)
	}
	// Only the runner container gets the credentials.
	pod := job.Spec.Template.Spec
	if pod.ServiceAccountName != account || pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("service account %q, automount %v", pod.ServiceAccountName, pod.AutomountServiceAccountToken)
	}
	mounted := false
	for _, m := range pod.Containers[0].VolumeMounts {
		mounted = mounted || m.Name == runspec.APIAccessVolume && m.MountPath == runspec.APIAccessPath && m.ReadOnly
	}
	if !mounted {
		t.Errorf("the runner has no API credentials: %+v", pod.Containers[0].VolumeMounts)
	}
	assertArgs(t, job, "--result-configmap="+job.Name)
	cm := &corev1.ConfigMap{}
	if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Name}, cm); err != nil ||
		metav1.GetControllerOf(cm) == nil || metav1.GetControllerOf(cm).Name != "channel" || len(cm.Data) != 0 {
		t.Fatalf("result ConfigMap %+v (%v)", cm, err)
	}

	first, hist1 := bigReport(t, 1000, 1)
	storeReport(t, job, first)
	finishJob(t, job, 0, "")
	second := waitForJob(t, ns, roundJobName("channel", "direct", 2))
	rep2, hist2 := bigReport(t, 1100, 10)
	storeReport(t, second, rep2)
	finishJob(t, second, 0, "")
	done := waitForPhase(t, ns, "channel", benchv1.PhaseCompleted)

	res := done.Status.Result("direct")
	merged, err := latency.Merge(hist1, hist2)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := latency.PercentilesOf(merged)
	l := res.Latency
	// 2,000 samples: p99 rests on 20 beyond it, p99.9 on 2, too few to be given.
	if l == nil || l.Samples != 2000 || l.EffectiveSamples != 2000 || l.P50Ms != want.P50 || l.P99Ms == nil ||
		*l.P99Ms != want.P99 || l.MaxMs != want.Max || l.SamplingRate != 1 || l.P999Ms != nil ||
		strings.Join(l.Unsupported, ",") != "p99.9" {
		t.Fatalf("latency %+v, want %+v without p99.9", l, want)
	}
	// Merged, not averaged: the median of both runs together, not the mean of their medians.
	if math.Abs(l.P50Ms-0.91) > 0.01 || !(l.P50Ms <= *l.P90Ms && *l.P90Ms <= *l.P99Ms && *l.P99Ms <= l.MaxMs) {
		t.Errorf("percentiles %+v", l)
	}
	// 1000 progress points per run, at most 120 per transport: 59 groups of 17 seconds each.
	if len(res.Series) != 2 || len(res.Series[0].TPS) != 59 || len(res.Series[0].Seconds) != 59 || res.Series[1].Round != 2 ||
		res.Series[0].Seconds[0] != 17 || res.Series[0].Seconds[58] != 1000 {
		t.Errorf("series %+v", res.Series)
	}
	if res.Runs[0].P99Ms == nil || res.Runs[1].P99Ms == nil || *res.Runs[1].P99Ms <= *res.Runs[0].P99Ms {
		t.Errorf("per-run p99 %v %v", res.Runs[0].P99Ms, res.Runs[1].P99Ms)
	}

	// The runner's credentials go with the end of the benchmark; the results stay.
	eventually(t, 10*time.Second, "the runner's API access removed", func() error {
		for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
			if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: account}, obj); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T still there (%w)", obj, err)
			}
		}
		return nil
	})
	for _, name := range wantNames {
		if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil || cm.Data[runspec.ResultKey] == "" {
			t.Errorf("result ConfigMap %s after the end: %v", name, err)
		}
	}
}

// TestResultReadWithoutItsPod: a run whose Job completed and whose pod is gone (node lost, pod
// garbage-collected) is still recorded, from its result ConfigMap.
func TestResultReadWithoutItsPod(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	tb := newBenchmark(ns, "podless")
	if err := testClient.Create(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	startOperator(t)
	job := waitForJob(t, ns, jobName("podless", "direct"))
	storeReport(t, job, resultReport(777, nil))
	// No pod at all: the Job controller's verdict alone.
	setJobFinished(t, job, true, "", "")
	done := waitForPhase(t, ns, "podless", benchv1.PhaseCompleted)
	if r := done.Status.Result("direct"); r == nil || r.TPS != 777 {
		t.Errorf("result %+v", r)
	}
}
