package benchmark

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/runorder"
	"github.com/tunnelbench/tunnelbench/internal/operator/statusguard"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// accept starts the clock of a new benchmark.
func (r *TunnelBenchmarkReconciler) accept(tb *benchv1.TunnelBenchmark, now time.Time) {
	tb.Status.Phase = benchv1.PhasePending
	tb.Status.StartTime = &metav1.Time{Time: now}
	tb.Status.Progress = benchv1.ProgressString(0, tb.TotalRuns())
	tb.Status.RunOrder = runorder.Planned(tb)
	tb.InitSweep() // a sweep's points, without results yet
	if d, known := tb.PlannedRunTime(); known {
		tb.Status.PlannedRunTime = d.String()
	}
	points := ""
	if param, values := tb.Spec.Sweep.Parameter(); param != "" {
		points = fmt.Sprintf(" at %d points of %s", len(values), param)
	}
	r.setCondition(tb, conditions.Progressing, metav1.ConditionTrue, conditions.ReasonAccepted, "waiting for the server")
	r.event(tb, corev1.EventTypeNormal, conditions.ReasonAccepted, "Accept",
		"Benchmark accepted: %d transports × %d repetitions%s (%s, seed %d), timeout %s", len(tb.Spec.Transports),
		tb.Repetitions(), points, tb.Order(), tb.Status.RunOrder.Seed, tb.TimeoutDuration())
}

// waitForServer reports a server that does not resolve yet, and fails once serverWait is over.
func (r *TunnelBenchmarkReconciler) waitForServer(tb *benchv1.TunnelBenchmark, now time.Time, err error) error {
	var se *serverError
	if !errors.As(err, &se) {
		return err
	}
	if se.Fatal {
		r.setCondition(tb, conditions.ServerResolved, metav1.ConditionFalse, se.Reason, se.Message)
		return r.end(tb, se.Reason, se.Message)
	}
	if wait := orDefault(se.Wait, orDefault(r.ServerWait, DefaultServerWait)); now.Sub(tb.Status.StartTime.Time) >= wait {
		r.setCondition(tb, conditions.ServerResolved, metav1.ConditionFalse, se.Reason, se.Message)
		return r.end(tb, se.Reason, fmt.Sprintf("%s (waited %s)", se.Message, wait))
	}
	if !r.hasCondition(tb, conditions.ServerResolved, metav1.ConditionFalse, se.Reason) {
		r.event(tb, corev1.EventTypeWarning, se.Reason, "ResolveServer", "%s", se.Message)
	}
	r.setCondition(tb, conditions.ServerResolved, metav1.ConditionFalse, se.Reason, se.Message)
	return nextPass(r.poll(tb))
}

// initialize runs `pgbench -i` once when asked; the pass goes on once it succeeded.
func (r *TunnelBenchmarkReconciler) initialize(ctx context.Context, tb *benchv1.TunnelBenchmark,
	server transport.Server, deadline time.Time) error {
	if !tb.Spec.Load.Initialize {
		r.setCondition(tb, conditions.Initialized, metav1.ConditionFalse, conditions.ReasonNotRequested,
			"spec.load.initialize is false: the pgbench tables must already exist")
		return nil
	}
	if meta.IsStatusConditionTrue(tb.Status.Conditions, conditions.Initialized) {
		return nil
	}
	tb.Status.Phase = benchv1.PhaseInitializing
	run := r.runnerContract(tb, true)
	description := fmt.Sprintf("initialization (pgbench -i -s %d)", max(tb.Spec.Load.Scale, 1))
	if run.Copy.Set() {
		description = fmt.Sprintf("initialization (copy data set %s, %d bytes of %s)", run.Copy.Table(), run.Copy.Bytes, run.Copy.Data)
	}
	step := step{ref: benchv1.RunRef{Transport: benchv1.InitTransportLabel}, pod: transport.ForInit(server), run: run,
		description: description}
	out, err := r.runStep(ctx, tb, step, deadline)
	switch {
	case err != nil:
		return err
	case out.state == stepRunning:
		return nextPass(out.requeue)
	case out.state == stepFailed:
		r.setCondition(tb, conditions.Initialized, metav1.ConditionFalse, out.reason, out.message)
		return r.end(tb, out.reason, fmt.Sprintf("%s: %s", step.description, out.message))
	}
	r.setCondition(tb, conditions.Initialized, metav1.ConditionTrue, conditions.ReasonInitialized, step.description+" succeeded")
	r.event(tb, corev1.EventTypeNormal, conditions.ReasonInitialized, "Initialize", "%s succeeded", step.description)
	return nil
}

// complete ends a benchmark whose every transport has a result.
func (r *TunnelBenchmarkReconciler) complete(tb *benchv1.TunnelBenchmark) {
	tb.Status.Phase = benchv1.PhaseCompleted
	tb.Status.CompletionTime = &metav1.Time{Time: r.now()}
	tb.Status.Live = nil
	msg := fmt.Sprintf("%d transports measured, %d repetitions each", len(tb.Status.Results), tb.Rounds())
	if p := tb.Status.Precision; p != nil {
		msg = fmt.Sprintf("%d transports measured, %d rounds each: %s", len(tb.Status.Results), tb.Rounds(), p.Message)
	}
	if sw := tb.Status.Sweep; sw != nil {
		msg = fmt.Sprintf("%d transports measured at %d points of %s, %d repetitions each%s", len(tb.Spec.Transports),
			len(sw.Points), sw.Parameter, tb.Repetitions(), knees(sw))
	}
	if b := tb.Status.Best; b != nil && b.Significant {
		msg += fmt.Sprintf("; best: %s at %.1f tps (median), ahead of every other at 95%%", b.Transport, b.TPS)
	} else if b != nil {
		msg += fmt.Sprintf("; no transport is significantly ahead at 95%%: %s", b.Summary)
	}
	r.setCondition(tb, conditions.Completed, metav1.ConditionTrue, conditions.ReasonCompleted, msg)
	r.setCondition(tb, conditions.Progressing, metav1.ConditionFalse, conditions.ReasonCompleted, msg)
	r.event(tb, corev1.EventTypeNormal, conditions.ReasonCompleted, "Complete", "%s", msg)
}

// knees says where each transport's curve stops gaining, e.g. "; knees: direct at 4, ssh at 8
// (still gaining)".
func knees(sw *benchv1.SweepStatus) string {
	var parts []string
	for _, c := range sw.Curves {
		switch {
		case c.Knee == nil:
			parts = append(parts, c.Transport+" none")
		case !c.Saturated:
			parts = append(parts, fmt.Sprintf("%s at %d (still gaining)", c.Transport, *c.Knee))
		default:
			parts = append(parts, fmt.Sprintf("%s at %d", c.Transport, *c.Knee))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; knees: " + strings.Join(parts, ", ")
}

// fail ends a benchmark with a reason and a message that says what broke and what to do.
func (r *TunnelBenchmarkReconciler) fail(tb *benchv1.TunnelBenchmark, reason, message string) {
	tb.Status.Phase = benchv1.PhaseFailed
	tb.Status.CompletionTime = &metav1.Time{Time: r.now()}
	tb.Status.Live = nil
	r.setCondition(tb, conditions.Failed, metav1.ConditionTrue, reason, message)
	r.setCondition(tb, conditions.Completed, metav1.ConditionFalse, reason, message)
	r.setCondition(tb, conditions.Progressing, metav1.ConditionFalse, reason, message)
	r.event(tb, corev1.EventTypeWarning, reason, "Fail", "%s", message)
}

// refuseStatus ends a benchmark whose pass produced a status the API server would refuse: the
// pass's status is dropped (its results, the offending run among them, are left out), the stored
// one ends Failed with reason InvalidResult naming the field, and the end releases the server's
// Lease as any end does. A status that would still be refused keeps only what says it ended.
func (r *TunnelBenchmarkReconciler) refuseStatus(tb, stored *benchv1.TunnelBenchmark, why string) {
	tb.Status = *stored.Status.DeepCopy()
	tb.Status.ObservedGeneration = tb.Generation
	r.fail(tb, conditions.ReasonInvalidResult, "the status this pass would write is refused by the TunnelBenchmark schema: "+why+
		"; the pass's results are left out. A runner image that writes nonsense into its report, or a report edited in its "+
		"ConfigMap, does this: check spec.runner.image and who may edit the namespace's ConfigMaps")
	if len(statusguard.Fit(tb)) == 0 {
		return
	}
	ended := benchv1.TunnelBenchmarkStatus{Phase: tb.Status.Phase, ObservedGeneration: tb.Status.ObservedGeneration,
		StartTime: tb.Status.StartTime, CompletionTime: tb.Status.CompletionTime, Server: tb.Status.Server}
	for _, typ := range []string{conditions.Failed, conditions.Completed, conditions.Progressing} {
		if c := meta.FindStatusCondition(tb.Status.Conditions, typ); c != nil {
			ended.Conditions = append(ended.Conditions, *c)
		}
	}
	tb.Status = ended
	statusguard.Fit(tb)
}
