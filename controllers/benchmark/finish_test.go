package benchmark

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func cancelBenchmark(t *testing.T, ns, name string) {
	t.Helper()
	tb := getBenchmark(t, ns, name)
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`))
	if err := testClient.Patch(context.Background(), tb, patch); err != nil {
		t.Fatal(err)
	}
}

func jobGone(ns, name string) error {
	job := getJobOrNil(ns, name)
	if job != nil && job.DeletionTimestamp.IsZero() {
		return errorf("Job %s still there", name)
	}
	return nil
}

// TestCancel: spec.cancel stops a running benchmark at once, keeping the run that finished,
// deleting the running Job (and so its pod), and cannot be undone; a queued benchmark cancels
// without ever starting.
func TestCancel(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()

	tb := newBenchmark(ns, "stopped", benchv1.TransportSpec{Name: "a", Type: "direct"}, benchv1.TransportSpec{Name: "b", Type: "direct"})
	if err := testClient.Create(ctx, inSpecOrder(tb)); err != nil {
		t.Fatal(err)
	}
	queued := newBenchmark(ns, "waiting")
	if err := testClient.Create(ctx, queued); err != nil {
		t.Fatal(err)
	}
	waitForPhase(t, ns, queued.Name, benchv1.PhaseQueued)
	finishJob(t, waitForJob(t, ns, jobName("stopped", "a")), 0, resultReport(500, nil))
	running := waitForJob(t, ns, jobName("stopped", "b"))

	cancelBenchmark(t, ns, "stopped")
	done := waitForPhase(t, ns, "stopped", benchv1.PhaseCancelled)
	c := meta.FindStatusCondition(done.Status.Conditions, conditions.Completed)
	if c == nil || c.Reason != conditions.ReasonCancelled || !strings.Contains(c.Message, "after 1 of 2 runs") {
		t.Errorf("Completed condition %+v, want Cancelled after 1 of 2 runs", c)
	}
	if r := done.Status.Result("a"); r == nil || r.Repetitions != 1 || r.TPS == 0 {
		t.Errorf("the finished run is lost: %+v", r)
	}
	if done.Status.Result("b") != nil || done.Status.Live != nil || done.Status.CompletionTime == nil {
		t.Errorf("status after cancel: %+v", done.Status)
	}
	eventually(t, 5*time.Second, "the running Job deleted", func() error { return jobGone(ns, running.Name) })
	if getJobOrNil(ns, jobName("stopped", "a")) == nil {
		t.Error("the finished run's Job was deleted with the running one")
	}
	assertEvents(t, ns, "stopped", conditions.ReasonCancelled)

	undo := getBenchmark(t, ns, "stopped")
	undo.Spec.Cancel = false
	if err := testClient.Update(ctx, undo); err == nil || !strings.Contains(err.Error(), "spec.cancel cannot be undone") {
		t.Errorf("undoing cancel: %v", err)
	}

	// The queue moves on once "stopped" is cancelled; cancelled while it waits, a benchmark never
	// starts.
	cancelBenchmark(t, ns, queued.Name)
	q := waitForPhase(t, ns, queued.Name, benchv1.PhaseCancelled)
	c = meta.FindStatusCondition(q.Status.Conditions, conditions.Completed)
	if c == nil || !strings.Contains(c.Message, "after 0 of 1 runs") {
		t.Errorf("queued benchmark's condition %+v", c)
	}
	if getJobOrNil(ns, jobName(queued.Name, "direct")) != nil {
		t.Error("a benchmark cancelled in the queue started a Job")
	}
}

// TestJobsTTL: an ended benchmark's Jobs go once its TTL has passed (the operator's default here:
// 0, at once), the results stay; spec.ttlSecondsAfterFinished overrides the default.
func TestJobsTTL(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t, func(r *TunnelBenchmarkReconciler) { r.JobsTTL = ptr.To(time.Duration(0)) })
	ctx := context.Background()

	kept := newBenchmark(ns, "kept")
	kept.Spec.TTLSecondsAfterFinished = ptr.To[int32](3600)
	expiring := newBenchmark(ns, "expiring")
	expiring.Spec.Exclusive = ptr.To(false)
	for _, tb := range []*benchv1.TunnelBenchmark{kept, expiring} {
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
		finishJob(t, waitForJob(t, ns, jobName(tb.Name, "direct")), 0, resultReport(500, nil))
		waitForPhase(t, ns, tb.Name, benchv1.PhaseCompleted)
	}
	var done *benchv1.TunnelBenchmark
	eventually(t, 10*time.Second, "the expired benchmark's Jobs removed", func() error {
		done = getBenchmark(t, ns, "expiring")
		if !meta.IsStatusConditionTrue(done.Status.Conditions, conditions.JobsRemoved) {
			return errorf("no JobsRemoved condition yet")
		}
		return jobGone(ns, jobName("expiring", "direct"))
	})
	c := meta.FindStatusCondition(done.Status.Conditions, conditions.JobsRemoved)
	if !strings.Contains(c.Message, "1 Jobs and their pods removed") {
		t.Errorf("JobsRemoved %+v", c)
	}
	if r := done.Status.Result("direct"); r == nil || r.TPS == 0 || done.Status.Phase != benchv1.PhaseCompleted {
		t.Errorf("the results went with the Jobs: %+v", done.Status)
	}
	consistently(t, 2*time.Second, "a benchmark with an hour's TTL keeps its Job", func() error {
		if getJobOrNil(ns, jobName("kept", "direct")) == nil {
			return errorf("the Job is gone")
		}
		return nil
	})
}

func getJobOrNil(ns, name string) *batchv1.Job {
	job := &batchv1.Job{}
	if err := testClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, job); err != nil {
		return nil
	}
	return job
}
