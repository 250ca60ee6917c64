package benchmark

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/engine"
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
// sets TransactionsFailed, naming the run, the count and pgbench's causes.
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
		Result: &engine.Result{TPS: 280, LatencyAvgMs: 14, Transactions: 2800, FailedTransactions: 7200, Clients: 4, Threads: 2,
			SerializationFailures: ptr.To[int64](7150), DeadlockFailures: ptr.To[int64](50)},
		Command: "pgbench -f script.sql -T 10", StartTime: time.Now().Add(-10 * time.Second).UTC().Truncate(time.Second),
		EndTime: time.Now().UTC().Truncate(time.Second),
	})
	finishJob(t, waitForJob(t, ns, jobName(tb.Name, "direct")), 0, string(b))
	done := waitForPhase(t, ns, tb.Name, benchv1.PhaseCompleted)
	c := assertCondition(t, done, conditions.TransactionsFailed, metav1.ConditionTrue, "TooManyFailed")
	if !strings.Contains(c.Message, "run 1 of transport direct: 7200 of 10000 transactions failed (72.0%") ||
		!strings.Contains(c.Message, "pgbench: 7150 serialization failures, 50 deadlocks") {
		t.Errorf("TransactionsFailed %q", c.Message)
	}
	assertEvents(t, ns, tb.Name, "TransactionsFailed")
}

// TestRateNotSustained: an open-loop run passes the rate and the latency limit to the runner,
// records its schedule, and one that skipped 30 % of it sets RateNotSustained.
func TestRateNotSustained(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	tb := newBenchmark(ns, "open")
	tb.Spec.Load.Rate, tb.Spec.Load.LatencyLimit = ptr.To[int32](500), &metav1.Duration{Duration: 5 * time.Millisecond}
	if err := testClient.Create(t.Context(), tb); err != nil {
		t.Fatal(err)
	}
	job := waitForJob(t, ns, jobName(tb.Name, "direct"))
	assertArgs(t, job, "--rate=500 --latency-limit=5ms")
	late := int64(400)
	b, _ := json.Marshal(report.Report{
		Result: &engine.Result{TPS: 350, LatencyAvgMs: 9.5, Transactions: 3500, Clients: 4, Threads: 2,
			OpenLoop: &engine.OpenLoop{LagAvgMs: 4.2, LagMaxMs: 80, Skipped: 1500, Late: &late}},
		Command: "pgbench -R 500 -L 5 -T 10", StartTime: time.Now().Add(-10 * time.Second).UTC().Truncate(time.Second),
		EndTime: time.Now().UTC().Truncate(time.Second),
	})
	finishJob(t, job, 0, string(b))
	done := waitForPhase(t, ns, tb.Name, benchv1.PhaseCompleted)
	c := assertCondition(t, done, conditions.RateNotSustained, metav1.ConditionTrue, "TooManySkipped")
	if !strings.Contains(c.Message, "run 1 of transport direct: 1500 of 5000 scheduled transactions skipped (30.0%") {
		t.Errorf("RateNotSustained %q", c.Message)
	}
	o := done.Status.Result("direct").Runs[0].OpenLoop
	if o == nil || o.RateTPS != 500 || o.ScheduleLagMs != 4.2 || o.ScheduleLagMaxMs != 80 || o.Skipped != 1500 ||
		o.Late == nil || *o.Late != 400 {
		t.Errorf("open loop %+v", o)
	}
	assertEvents(t, ns, tb.Name, "RateNotSustained")
}
