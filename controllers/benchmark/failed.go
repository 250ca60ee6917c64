package benchmark

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// warnFailedTransactions sets TransactionsFailed, with a Warning event the first time, when the
// run failed too many of its transactions.
func (r *TunnelBenchmarkReconciler) warnFailedTransactions(tb *benchv1.TunnelBenchmark, transport string,
	run benchv1.RunResult) {
	if !run.FailedTooOften() {
		return
	}
	all := run.Transactions + run.FailedTransactions
	msg := fmt.Sprintf("run %d of transport %s: %d of %d transactions failed (%.1f%%, more than %.0f%%; pgbench: %d "+
		"serialization failures, %d deadlocks): pgbench counts them and goes on, so its tps counts only the others; the "+
		"run takes no part in the comparisons. Check the script's isolation and the server's log", run.Round, transport,
		run.FailedTransactions, all, 100*float64(run.FailedTransactions)/float64(all), 100*benchv1.MaxFailedShare,
		run.SerializationFailures, run.DeadlockFailures)
	r.warnOnce(tb, conditions.TransactionsFailed, conditions.ReasonTooManyFailed, msg)
}

// warnSkippedTransactions sets RateNotSustained, with a Warning event the first time, when an
// open-loop run skipped too much of its schedule.
func (r *TunnelBenchmarkReconciler) warnSkippedTransactions(tb *benchv1.TunnelBenchmark, transport string,
	run benchv1.RunResult) {
	if !run.SkippedTooOften() {
		return
	}
	o := run.OpenLoop
	all := run.Transactions + run.FailedTransactions + o.Skipped
	msg := fmt.Sprintf("run %d of transport %s: %d of %d scheduled transactions skipped (%.1f%%, more than %.0f%%): the "+
		"path did not keep %d tps within spec.load.latencyLimit, and its latency describes only the transactions it "+
		"ran; the run takes no part in the comparisons. Lower spec.load.rate to one every path sustains", run.Round,
		transport, o.Skipped, all, 100*float64(o.Skipped)/float64(all), 100*benchv1.MaxSkippedShare, o.RateTPS)
	r.warnOnce(tb, conditions.RateNotSustained, conditions.ReasonTooManySkipped, msg)
}

// warnOnce sets a warning condition True with the message, and emits a Warning event (reason the
// condition's type) the first time it turns True: later runs update the message without an event
// each.
func (r *TunnelBenchmarkReconciler) warnOnce(tb *benchv1.TunnelBenchmark, condition, reason, msg string) {
	if !r.hasCondition(tb, condition, metav1.ConditionTrue, reason) {
		r.event(tb, corev1.EventTypeWarning, condition, "Measure", "%s", msg)
	}
	r.setCondition(tb, condition, metav1.ConditionTrue, reason, msg)
}
