package benchmark

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=delete

// cancel ends a benchmark that spec.cancel stops: its unfinished Jobs are deleted (their pods go
// with them: the runner stops pgbench on SIGTERM) and the phase becomes Cancelled; the runs that
// finished stay in status. The peers are removed once the end is stored, as for any end (Reconcile).
func (r *TunnelBenchmarkReconciler) cancel(ctx context.Context, tb *benchv1.TunnelBenchmark) error {
	if _, err := r.deleteJobs(ctx, tb, func(job *batchv1.Job) bool { return !jobFinished(job) }); err != nil {
		return err
	}
	done := 0
	for _, res := range tb.Status.AllResults() {
		done += int(res.Repetitions)
	}
	tb.Status.Phase = benchv1.PhaseCancelled
	tb.Status.CompletionTime = &metav1.Time{Time: r.now()}
	tb.Status.Live = nil
	msg := fmt.Sprintf("cancelled by spec.cancel after %d of %d runs; the finished runs stay in status", done, tb.TotalRuns())
	r.setCondition(tb, conditions.Completed, metav1.ConditionFalse, conditions.ReasonCancelled, msg)
	r.setCondition(tb, conditions.Progressing, metav1.ConditionFalse, conditions.ReasonCancelled, msg)
	r.event(tb, corev1.EventTypeNormal, conditions.ReasonCancelled, "Cancel", "%s", msg)
	return nil
}

// expireJobs removes an ended benchmark's Jobs, and with them their pods, once
// spec.ttlSecondsAfterFinished (or the operator's default) has passed since it ended, and
// requeues until then. The results stay in status, and the runs' raw reports in their ConfigMaps,
// until the benchmark is deleted. Without a TTL the Jobs stay.
func (r *TunnelBenchmarkReconciler) expireJobs(ctx context.Context, tb *benchv1.TunnelBenchmark) error {
	ttl, ok := r.jobsTTL(tb)
	if !ok || meta.IsStatusConditionTrue(tb.Status.Conditions, conditions.JobsRemoved) {
		return nil
	}
	ended := r.now()
	if tb.Status.CompletionTime != nil {
		ended = tb.Status.CompletionTime.Time
	}
	if wait := ended.Add(ttl).Sub(r.now()); wait > 0 {
		return nextPass(ctrl.Result{RequeueAfter: wait})
	}
	removed, err := r.deleteJobs(ctx, tb, func(*batchv1.Job) bool { return true })
	if err != nil {
		return err
	}
	r.setCondition(tb, conditions.JobsRemoved, metav1.ConditionTrue, conditions.ReasonTTLExpired,
		fmt.Sprintf("%d Jobs and their pods removed %s after the benchmark ended (ttlSecondsAfterFinished); the results stay in status",
			removed, ttl))
	return nil
}

// jobsTTL is how long an ended benchmark keeps its Jobs: spec.ttlSecondsAfterFinished, else the
// operator's default; ok is false when they are kept until the benchmark is deleted.
func (r *TunnelBenchmarkReconciler) jobsTTL(tb *benchv1.TunnelBenchmark) (time.Duration, bool) {
	switch {
	case tb.Spec.TTLSecondsAfterFinished != nil:
		return time.Duration(*tb.Spec.TTLSecondsAfterFinished) * time.Second, true
	case r.JobsTTL != nil:
		return *r.JobsTTL, true
	}
	return 0, false
}

// deleteJobs deletes the benchmark's Jobs that match, with their pods (background propagation),
// each only if it is still the Job that was read (UID precondition), and counts them.
func (r *TunnelBenchmarkReconciler) deleteJobs(ctx context.Context, tb *benchv1.TunnelBenchmark,
	match func(*batchv1.Job) bool) (int, error) {
	jobs := &batchv1.JobList{}
	if err := r.List(ctx, jobs, client.InNamespace(tb.Namespace), client.MatchingLabels{benchv1.LabelBenchmark: tb.Name}); err != nil {
		return 0, fmt.Errorf("cannot list the benchmark's Jobs: %w", err)
	}
	removed := 0
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if !metav1.IsControlledBy(job, tb) || !job.DeletionTimestamp.IsZero() || !match(job) {
			continue
		}
		o := &metav1.PartialObjectMetadata{ObjectMeta: job.ObjectMeta}
		o.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("Job"))
		if r.deleteFound(ctx, o) {
			removed++
		}
	}
	return removed, nil
}

// jobFinished reports whether a Job has ended, successfully or not.
func jobFinished(job *batchv1.Job) bool {
	return jobCondition(job, batchv1.JobComplete) || jobCondition(job, batchv1.JobFailed)
}
