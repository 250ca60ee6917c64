package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// A run of several runner pods (spec.runner.pods) is one Indexed Job. Its pods meet in the run's
// result ConfigMap: each marks itself ready there once warmed up (runspec.ReadyKey), the operator
// sets their common start once all are (runspec.StartKey), and each keeps its report under a key
// of its own (runspec.ReportKey), which the operator merges (report.MergePods).

// startDelay is how far ahead of the release the pods' common start is set: time for every pod
// to read it (they poll every 100 ms) before it comes.
const startDelay = time.Second

// resultData is a run's result ConfigMap's data, or nil when it cannot be read.
func (r *TunnelBenchmarkReconciler) resultData(ctx context.Context, namespace, name string) map[string]string {
	cm := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cm); err != nil {
		if !apierrors.IsNotFound(err) {
			log.FromContext(ctx).Error(err, "Cannot read a result ConfigMap", "configmap", name)
		}
		return nil
	}
	return cm.Data
}

// podReports are the reports of a run's n pods in its result ConfigMap's data, by index; nil where
// a pod has none (yet) or an unreadable one.
func podReports(data map[string]string, n int) []*report.Report {
	out := make([]*report.Report, n)
	for i := range n {
		if raw := data[runspec.ReportKey(n, i)]; raw != "" {
			if rep, err := report.Decode(raw); err == nil {
				out[i] = rep
			}
		}
	}
	return out
}

// readyPods counts the pods of a run of n that marked themselves ready.
func readyPods(data map[string]string, n int) int {
	ready := 0
	for i := range n {
		if data[runspec.ReadyKey(i)] != "" {
			ready++
		}
	}
	return ready
}

// decidePods judges a run of several pods where it differs from a run of one: a finished Job's
// reports, merged, and a running one's release. handled is false where the one-pod judgement
// stands.
func decidePods(o observedStep, job *batchv1.Job, n int) (d stepDecision, handled bool) {
	switch {
	case jobCondition(job, batchv1.JobComplete):
		for i, rep := range o.podReports {
			if rep == nil {
				return stepDecision{action: actFail, reason: conditions.ReasonJobFailed, message: fmt.Sprintf(
					"Job %s succeeded but runner pod %d of %d left no report in ConfigMap %s", job.Name, i, n, job.Name)}, true
			}
		}
		merged, err := report.MergePods(o.podReports)
		if err != nil {
			return stepDecision{action: actFail, reason: conditions.ReasonJobFailed, message: err.Error()}, true
		}
		return stepDecision{action: actSucceed, report: merged}, true
	case jobCondition(job, batchv1.JobFailed):
		for i, rep := range o.podReports {
			if rep != nil && rep.Failure != nil {
				return stepDecision{action: actFail, reason: rep.Failure.Reason, blame: true,
					message: fmt.Sprintf("runner pod %d of %d: %s", i, n, rep.Failure.Message)}, true
			}
		}
		return stepDecision{}, false
	case o.data[runspec.StartKey] == "" && readyPods(o.data, n) == n:
		return stepDecision{action: actRelease, reason: "Starting",
			message: fmt.Sprintf("all %d runner pods of Job %s are ready: their measured loads start together", n, job.Name)}, true
	}
	return stepDecision{}, false
}

// release sets the common start of a run's pods, startDelay ahead.
func (r *TunnelBenchmarkReconciler) release(ctx context.Context, namespace, name string) error {
	start := r.now().Add(startDelay).UTC().Format(time.RFC3339Nano)
	patch, err := json.Marshal(map[string]any{"data": map[string]string{runspec.StartKey: start}})
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = namespace, name
	if err := r.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("cannot start the runner pods of Job %s: %w", name, err)
	}
	return nil
}

// podRuns are each pod's own figures of a run of several, with the node it ran on.
func podRuns(reps []*report.Report, pods []corev1.Pod) []benchv1.PodRun {
	nodes := map[string]string{}
	for _, p := range pods {
		if i, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]; ok && p.Spec.NodeName != "" {
			nodes[i] = p.Spec.NodeName
		}
	}
	var first time.Time
	for _, rep := range reps {
		if first.IsZero() || rep.StartTime.Before(first) {
			first = rep.StartTime
		}
	}
	out := make([]benchv1.PodRun, 0, len(reps))
	for i, rep := range reps {
		run := benchv1.PodRun{Index: int32(i), Node: nodes[strconv.Itoa(i)],
			StartOffsetMs: float64(rep.StartTime.Sub(first).Microseconds()) / 1000}
		if res := rep.Result; res != nil {
			run.TPS, run.Transactions, run.LatencyAvgMs = res.TPS, res.Transactions, res.LatencyAvgMs
		}
		if w := rep.Window; w != nil {
			run.TPS, run.Transactions = w.TPS, w.Transactions
		}
		out = append(out, run)
	}
	return out
}
