package controllers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/report"
)

// TestFailedRunsLeftOut: a round in which either side failed more than 1 % of its transactions is
// not paired; at 1 % or below it is.
func TestFailedRunsLeftOut(t *testing.T) {
	run := func(round int32, tps float64, ok, failed int64) benchv1.RunResult {
		return benchv1.RunResult{Round: round, TPS: tps, Transactions: ok, FailedTransactions: failed}
	}
	a := &benchv1.TransportResult{Runs: []benchv1.RunResult{run(1, 100, 1000, 0), run(2, 110, 1000, 10), run(3, 105, 1000, 0)}}
	b := &benchv1.TransportResult{Runs: []benchv1.RunResult{run(1, 90, 280, 720), run(2, 95, 990, 10), run(3, 99, 1000, 11)}}
	as, bs := benchv1.PairedFigures(a, b)
	// Round 1: 72 % failed; round 3: 11 of 1011, just above 1 %; round 2: 10 of 1010 on both sides, below it.
	if len(as) != 1 || as[0] != 110 || bs[0] != 95 {
		t.Errorf("paired %v %v, want round 2 only", as, bs)
	}
}

// TestTransactionsFailedCondition: a run of which 72 % of the transactions failed (pgbench exit 0)
// sets TransactionsFailed, naming the run and the count.
func TestTransactionsFailedCondition(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	tb := newBenchmark(ns, "failing")
	tb.Spec.Load.Repetitions = 1
	if err := testClient.Create(t.Context(), tb); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(report.Report{
		Result:  &pgbench.Result{TPS: 280, LatencyAvgMs: 14, Transactions: 2800, FailedTransactions: 7200, Clients: 4, Threads: 2},
		Command: "pgbench -f script.sql -T 10", StartTime: time.Now().Add(-10 * time.Second).UTC().Truncate(time.Second),
		EndTime: time.Now().UTC().Truncate(time.Second),
	})
	finishJob(t, waitForJob(t, ns, jobName(tb.Name, "direct")), 0, string(b))
	done := waitForPhase(t, ns, tb.Name, benchv1.PhaseCompleted)
	c := assertCondition(t, done, ConditionTransactionsFailed, metav1.ConditionTrue, "TooManyFailed")
	if !strings.Contains(c.Message, "run 1 of transport direct: 7200 of 10000 transactions failed (72.0%") {
		t.Errorf("TransactionsFailed %q", c.Message)
	}
	assertEvents(t, ns, tb.Name, "TransactionsFailed")
}
