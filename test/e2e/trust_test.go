//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

// verdicts runs an A/A/B benchmark — direct twice and ssh — with interleaved repetitions and
// returns it once it ended.
func verdicts(t *testing.T, ns, name string, pg *fixture.Postgres) *benchv1.TunnelBenchmark {
	t.Helper()
	tb := benchmark(ns, name, pg, fixture.CredentialsSecret)
	tb.Spec.Transports = []benchv1.TransportSpec{
		{Name: "direct", Type: benchv1.TransportDirect},
		{Name: "direct-again", Type: benchv1.TransportDirect},
		{Name: "ssh", Type: benchv1.TransportSSH},
	}
	tb.Spec.Load.Repetitions = 3
	tb.Spec.Load.Warmup = &metav1.Duration{Duration: time.Second}
	// 6 reports a run at least, of which the within-run error is estimated (5 at least).
	tb.Spec.Load.Duration = &metav1.Duration{Duration: 6 * time.Second}
	tb.Spec.Load.ProgressInterval = &metav1.Duration{Duration: time.Second}
	end := complete(t, tb, 8*time.Minute)
	for _, r := range end.Status.Results {
		c := r.Comparison
		t.Logf("%s: median %.0f tps [%.0f–%.0f], %s (%s); latency %+v", r.Transport, r.TPS, r.TPSSpread.Min,
			r.TPSSpread.Max, c.Verdict, c.Reason, ptrVal(r.Latency))
	}
	return end
}

// trustworthyAnswers checks, in the real cluster, what makes a figure worth signing: repeated,
// interleaved runs; an A/A comparison that finds no difference; a real difference found with an
// interval that excludes 1; latency percentiles from every transaction; tps over time.
func trustworthyAnswers(t *testing.T, ns string, pg *fixture.Postgres) {
	end := verdicts(t, ns, "a-a-b", pg)
	aa := end.Status.Result("direct-again").Comparison
	if aa.Verdict != benchv1.VerdictIndistinguishable {
		// A 95 % interval misses the truth 5 % of the time: an A/A comparison comes out
		// "different" once in twenty by construction. One fresh benchmark decides (a
		// spurious failure then has a 0.25 % chance); two in a row is a real fault.
		t.Logf("A/A came out %s (%s): running a fresh A/A/B benchmark once", aa.Verdict, aa.Reason)
		end = verdicts(t, ns, "a-a-b-again", pg)
		aa = end.Status.Result("direct-again").Comparison
	}
	if aa.Verdict != benchv1.VerdictIndistinguishable || aa.Lower == nil || *aa.Lower > 1 || *aa.Upper < 1 {
		t.Errorf("direct vs direct: %+v, want indistinguishable with an interval around 1", aa)
	}
	ssh := end.Status.Result("ssh").Comparison
	if ssh.Verdict != benchv1.VerdictSlower || ssh.Upper == nil || *ssh.Upper >= 1 || ssh.Pairs != 3 {
		t.Errorf("ssh vs direct: %+v, want slower with an interval below 1", ssh)
	}
	if best := end.Status.Best; best == nil || best.Significant || len(best.Ties) < 2 {
		t.Errorf("best %+v: direct and direct-again must tie", best)
	}

	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{benchv1.LabelBenchmark: end.Name}); err != nil {
		t.Fatal(err)
	}
	for _, r := range end.Status.Results {
		if len(r.Runs) != 3 || r.TPSSpread == nil || r.TPSSpread.CV == nil {
			t.Errorf("%s: runs %+v, spread %+v", r.Transport, r.Runs, r.TPSSpread)
		}
		// Each run's own error, from its progress reports: what the planner weighs against the
		// spread between rounds. A run's mean of 6 one-second reports on this machine is known
		// within a few percent, never exactly, and never worse than the spread a report can have.
		for _, run := range r.Runs {
			if s := run.Steadiness; s == nil || s.MeanErrorPercent == nil || *s.MeanErrorPercent <= 0 || *s.MeanErrorPercent > 50 {
				t.Errorf("%s run %d: steadiness %+v, want the within-run error in (0, 50] %%", r.Transport, run.Round, ptrVal(s))
			} else {
				t.Logf("%s run %d: %.0f tps, within-run error %.2f %%", r.Transport, run.Round, run.TPS, *s.MeanErrorPercent)
			}
		}
		l := r.Latency
		if l == nil || l.Samples <= 0 || l.SamplingRate <= 0 || l.P90Ms == nil || l.P99Ms == nil || l.P999Ms == nil ||
			!(0 < l.P50Ms && l.P50Ms <= *l.P90Ms && *l.P90Ms <= *l.P99Ms && *l.P99Ms <= *l.P999Ms && *l.P999Ms <= l.MaxMs) {
			t.Errorf("%s: latency %+v", r.Transport, l)
		}
		if l != nil && l.SamplingRate == 1 && l.Samples != r.Transactions {
			t.Errorf("%s: %d latencies for %d transactions, all logged", r.Transport, l.Samples, r.Transactions)
		}
		points := 0
		for _, s := range r.Series {
			points += len(s.TPS)
		}
		if len(r.Series) != 3 || points < 9 || points > 120 {
			t.Errorf("%s: %d series, %d points", r.Transport, len(r.Series), points)
		}
	}
	// Interleaved, in the random order status recorded: the runs started in exactly that order,
	// every transport's round 1 before any round 2.
	order := end.Status.RunOrder
	if order == nil || len(order.Rounds) != 3 || order.Order != benchv1.OrderInterleaved {
		t.Fatalf("status.runOrder %+v, want 3 interleaved rounds", order)
	}
	t.Logf("run order (seed %d): %s", order.Seed, strings.Join(order.Rounds, " | "))
	var previous time.Time
	for i, names := range order.Rounds {
		if fields := strings.Fields(names); len(fields) != 3 {
			t.Errorf("round %d runs %q, want each of the 3 transports once", i+1, names)
		}
		for _, name := range strings.Fields(names) {
			started := runStart(t, end, name, int32(i+1))
			if !started.After(previous) {
				t.Errorf("%s round %d started at %s, not after the run before it in the recorded order (%s)",
					name, i+1, started, previous)
			}
			previous = started
		}
	}
	if len(jobs.Items) != 9 {
		t.Errorf("%d Jobs, want one per run (9)", len(jobs.Items))
	}
}

// runStart is when a transport's round started.
func runStart(t *testing.T, tb *benchv1.TunnelBenchmark, transport string, round int32) time.Time {
	t.Helper()
	for _, r := range tb.Status.Result(transport).Runs {
		if r.Round == round && r.StartTime != nil {
			return r.StartTime.Time
		}
	}
	t.Fatalf("%s has no round %d", transport, round)
	return time.Time{}
}

// twoBenchmarksQueue applies two benchmarks of one server at once: the later one waits in Queued,
// naming the earlier, and starts only when it has ended.
func twoBenchmarksQueue(t *testing.T, ns string, pg *fixture.Postgres) {
	first := benchmark(ns, "queue-first", pg, fixture.CredentialsSecret)
	first.Spec.Transports = first.Spec.Transports[:1]
	second := first.DeepCopy()
	second.Name = "queue-second"
	if err := k8s.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	// Creation timestamps have one-second resolution: the order must not be a tie.
	time.Sleep(1100 * time.Millisecond)
	if err := k8s.Create(ctx, second); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, time.Second, "the second benchmark queued", func() error {
		got := &benchv1.TunnelBenchmark{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(second), got); err != nil {
			return err
		}
		if got.Status.Phase != benchv1.PhaseQueued {
			return fmt.Errorf("phase %q", got.Status.Phase)
		}
		return nil
	})
	a := waitForEnd(t, ns, first.Name, 4*time.Minute)
	b := waitForEnd(t, ns, second.Name, 4*time.Minute)
	if a.Status.Phase != benchv1.PhaseCompleted || b.Status.Phase != benchv1.PhaseCompleted {
		t.Fatalf("phases %s, %s", a.Status.Phase, b.Status.Phase)
	}
	// The second measured nothing while the first ran.
	if start := b.Status.Results[0].Runs[0].StartTime; start == nil || !start.After(a.Status.CompletionTime.Time) {
		t.Errorf("the second's run started at %v, the first ended at %v", start, a.Status.CompletionTime)
	}
	// What the queue cost (docs/studies/build-times.md): the first's end to the second leaving the
	// queue, the Lease released once the first's runner pods stopped.
	if b.Status.StartTime != nil && a.Status.CompletionTime != nil {
		t.Logf("the second left the queue %s after the first ended", b.Status.StartTime.Sub(a.Status.CompletionTime.Time))
	}
}
