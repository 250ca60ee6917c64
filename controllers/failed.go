package controllers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// ConditionTransactionsFailed is True once a run had more than benchv1.MaxFailedShare of its transactions
// fail: that run takes no part in any comparison (results.go), and the condition says which and
// how many.
const ConditionTransactionsFailed = "TransactionsFailed"

// warnFailedTransactions sets TransactionsFailed, with a Warning event the first time, when the
// run failed too many of its transactions.
func (r *TunnelBenchmarkReconciler) warnFailedTransactions(tb *benchv1.TunnelBenchmark, transport string,
	run benchv1.RunResult) {
	if !run.FailedTooOften() {
		return
	}
	all := run.Transactions + run.FailedTransactions
	msg := fmt.Sprintf("run %d of transport %s: %d of %d transactions failed (%.1f%%, more than %.0f%%): pgbench counts "+
		"serialization and deadlock failures and goes on, so its tps counts only the others; the run takes no part in "+
		"the comparisons. Check the script and the server's log for the failures' cause", run.Round, transport,
		run.FailedTransactions, all, 100*float64(run.FailedTransactions)/float64(all), 100*benchv1.MaxFailedShare)
	if !r.hasCondition(tb, ConditionTransactionsFailed, metav1.ConditionTrue, "TooManyFailed") {
		r.event(tb, corev1.EventTypeWarning, "TransactionsFailed", "Measure", "%s", msg)
	}
	r.setCondition(tb, ConditionTransactionsFailed, metav1.ConditionTrue, "TooManyFailed", msg)
}
