//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

// precisionRTT is the emulated link of the slower path: 4 clients of `select 1`, one round trip a
// transaction, are bound to 4 / 5 ms = 800 tps, far below the LAN's.
const precisionRTT = 5 * time.Millisecond

// sequentialBenchmark is a decide-goal benchmark of transports within bound rounds of 2 s.
func sequentialBenchmark(ns, name string, pg *fixture.Postgres, bound int32, transports ...benchv1.TransportSpec) *benchv1.TunnelBenchmark {
	tb := benchmark(ns, name, pg, fixture.CredentialsSecret)
	tb.Spec.Transports = transports
	tb.Spec.Load.Builtin, tb.Spec.Load.Script, tb.Spec.Load.Protocol = "", "select 1;", benchv1.Protocol("simple")
	tb.Spec.Load.Clients, tb.Spec.Load.Threads = wanClients, 2
	tb.Spec.Load.Repetitions, tb.Spec.Load.Duration = bound, &metav1.Duration{Duration: 2 * time.Second}
	tb.Spec.Load.Warmup = &metav1.Duration{Duration: time.Second}
	tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
	return tb
}

// precisionTargets checks a precision target in the real cluster: a clearly slower path (across
// an emulated 5 ms link) is decided at the first look, after round 3 of at most 6, and says
// slower; an A/A pair has nothing to decide, runs to its bound and says indistinguishable with the
// interval it reached. Each benchmark's Jobs are its rounds' runs, no more.
func precisionTargets(t *testing.T, ns string, pg *fixture.Postgres) {
	slow := complete(t, sequentialBenchmark(ns, "precision-slower", pg, 6,
		benchv1.TransportSpec{Name: "lan", Type: benchv1.TransportDirect},
		benchv1.TransportSpec{Name: "wan", Type: benchv1.TransportDirect,
			Network: &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: precisionRTT}}}), 6*time.Minute)
	st := slow.Status.Precision
	t.Logf("slower: %+v", ptrVal(st))
	if st == nil || !st.Met || st.StoppedAfter != 3 || st.Rounds != 3 || st.MaxRounds != 6 ||
		!strings.Contains(st.Message, "met after 3 of at most 6") {
		t.Errorf("status.precision %+v, want met after the first look (round 3 of 6)", ptrVal(st))
	}
	wan := slow.Status.Result("wan")
	bound := float64(wanClients) / precisionRTT.Seconds()
	if c := wan.Comparison; c == nil || c.Verdict != benchv1.VerdictSlower || c.Upper == nil || *c.Upper >= 1 ||
		!strings.Contains(c.Reason, "repeated interval") {
		t.Errorf("wan vs lan: %+v, want slower with the design's interval", c)
	}
	if wan.TPS > 1.05*bound {
		t.Errorf("wan: %.0f tps, above clients / RTT = %.0f", wan.TPS, bound)
	}
	assertRunsAndJobs(t, slow, 3)

	aa := complete(t, sequentialBenchmark(ns, "precision-a-a", pg, 4,
		benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect},
		benchv1.TransportSpec{Name: "direct-again", Type: benchv1.TransportDirect}), 6*time.Minute)
	c := aa.Status.Result("direct-again").Comparison
	if c.Verdict != benchv1.VerdictIndistinguishable {
		// The design's intervals miss the truth in 5 % of A/A benchmarks, like a fixed design's:
		// one fresh benchmark decides (trustworthyAnswers does the same).
		t.Logf("A/A came out %s (%s): running a fresh one", c.Verdict, c.Reason)
		aa = complete(t, sequentialBenchmark(ns, "precision-a-a-again", pg, 4,
			benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect},
			benchv1.TransportSpec{Name: "direct-again", Type: benchv1.TransportDirect}), 6*time.Minute)
		c = aa.Status.Result("direct-again").Comparison
	}
	st = aa.Status.Precision
	t.Logf("A/A: %+v; %s", ptrVal(st), c.Reason)
	if st == nil || st.Met || st.StoppedAfter != 4 || !strings.Contains(st.Message, "not met within the bound of 4 rounds") ||
		st.WidestHalfWidthPercent == nil || !strings.Contains(st.Message, "the widest interval") {
		t.Errorf("status.precision %+v, want the bound reached, not met, with the interval reached", ptrVal(st))
	}
	if c.Verdict != benchv1.VerdictIndistinguishable || c.Lower == nil || *c.Lower > 1 || *c.Upper < 1 || c.Pairs != 4 {
		t.Errorf("direct vs direct: %+v, want indistinguishable over 4 pairs with an interval around 1", c)
	}
	if hw := math.Sqrt(*c.Upper / *c.Lower) - 1; st != nil && st.WidestHalfWidthPercent != nil &&
		math.Abs(hw*100-*st.WidestHalfWidthPercent) > 0.01 {
		t.Errorf("the widest half-width %v %% is not the interval's %.2f %%", *st.WidestHalfWidthPercent, hw*100)
	}
	assertRunsAndJobs(t, aa, 4)
}

// assertRunsAndJobs checks that every transport of tb ran rounds runs, each its own Job.
func assertRunsAndJobs(t *testing.T, tb *benchv1.TunnelBenchmark, rounds int) {
	t.Helper()
	for _, r := range tb.Status.Results {
		if len(r.Runs) != rounds {
			t.Errorf("%s: %d runs, want %d", r.Transport, len(r.Runs), rounds)
		}
	}
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(tb.Namespace), client.MatchingLabels{benchv1.LabelBenchmark: tb.Name}); err != nil {
		t.Fatal(err)
	}
	if want := rounds * len(tb.Spec.Transports); len(jobs.Items) != want {
		t.Errorf("%s: %d Jobs, want %d (one per run)", tb.Name, len(jobs.Items), want)
	}
	if runs := rounds * len(tb.Spec.Transports); tb.Status.Progress != fmt.Sprintf("%d/%d", runs, runs) {
		t.Errorf("%s: progress %q", tb.Name, tb.Status.Progress)
	}
}
