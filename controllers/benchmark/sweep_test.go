package benchmark

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// TestSweepRunsEveryPoint: a clients sweep runs every (point, transport, round) once, each Job
// telling its runner the point's clients (and no more threads than clients), in the random order
// status.runOrder records, through an operator restarted in the middle; each point's results are
// compared with the baseline at the same point, and each transport's curve finds its knee.
func TestSweepRunsEveryPoint(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	ctx := context.Background()
	tb := newBenchmark(ns, "sweep",
		benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect},
		benchv1.TransportSpec{Name: "flat", Type: benchv1.TransportTLS})
	tb.Spec.Load.Repetitions, tb.Spec.Load.Threads = 2, 2
	tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 4, 8}}
	if err := testClient.Create(ctx, tb); err != nil {
		t.Fatal(err)
	}
	// direct scales with clients up to 4 and is flat beyond; flat is flat from the first point.
	model := func(transport string, clients int, round int) float64 {
		jitter := 1 + 0.01*float64(round)
		if transport == "flat" {
			return 500 * jitter
		}
		return 100 * float64(min(clients, 4)) * jitter
	}
	op := startOperator(t)
	var ran []string
	for i := range 12 {
		if i == 5 {
			op.Stop() // in the middle of the sweep
			op = startOperator(t)
		}
		job := waitForUnfinishedJob(t, ns)
		transport, point, round := job.Labels[benchv1.LabelTransport], job.Labels[benchv1.LabelPoint], job.Labels[benchv1.LabelRound]
		clients, _ := strconv.Atoi(point)
		r, _ := strconv.Atoi(round)
		args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
		if !strings.Contains(args, fmt.Sprintf("--clients=%d ", clients)) ||
			!strings.Contains(args, fmt.Sprintf("--threads=%d ", min(clients, 2))) {
			t.Errorf("Job %s at clients=%s: runner told %s", job.Name, point, args)
		}
		ran = append(ran, fmt.Sprintf("%s@%s", transport, point))
		finishJob(t, job, 0, resultReport(model(transport, clients, r), nil))
	}
	done := waitForPhase(t, ns, "sweep", benchv1.PhaseCompleted)

	if done.Status.Progress != "12/12" || len(done.Status.Results) != 6 || done.Status.Sweep == nil {
		t.Fatalf("progress %s, %d results (3 points × 2 transports), sweep %v", done.Status.Progress, len(done.Status.Results), done.Status.Sweep)
	}
	var planned []string
	for _, r := range done.Status.RunOrder.Rounds {
		planned = append(planned, strings.Fields(r)...)
	}
	if !slices.Equal(ran, planned) {
		t.Errorf("ran %v, planned %v", ran, planned)
	}
	sw := done.Status.Sweep
	// The results are written once, in status.results: each with its point, points in the
	// sweep's order and transports in the spec's within each, as the API server stored them.
	var stored []string
	for _, r := range done.Status.Results {
		stored = append(stored, fmt.Sprintf("%d/%s", r.Point, r.Transport))
	}
	if want := []string{"1/direct", "1/flat", "4/direct", "4/flat", "8/direct", "8/flat"}; !slices.Equal(stored, want) {
		t.Errorf("status.results %v, want %v", stored, want)
	}
	for i, p := range sw.Points {
		at := done.ResultsAt(i)
		if p.Value != []int32{1, 4, 8}[i] || len(at) != 2 || p.Best == nil {
			t.Fatalf("point %d: %+v, results %+v", i, p, at)
		}
		if c := benchv1.FindResult(at, "flat").Comparison; c == nil || c.Baseline != "direct" || c.Pairs != 2 {
			t.Errorf("point %d: flat's comparison %+v", p.Value, c)
		}
	}
	if len(sw.Curves) != 2 {
		t.Fatalf("curves %+v", sw.Curves)
	}
	direct, flat := sw.Curves[0], sw.Curves[1]
	if direct.Knee == nil || *direct.Knee != 4 || !direct.Saturated || direct.Peak == 1 {
		t.Errorf("direct: knee %v saturated %v peak %d (%s)", direct.Knee, direct.Saturated, direct.Peak, direct.KneeReason)
	}
	if flat.Knee == nil || *flat.Knee != 1 || !flat.Saturated {
		t.Errorf("flat: knee %v saturated %v (%s)", flat.Knee, flat.Saturated, flat.KneeReason)
	}
	if g := direct.Points[1].Gain; g == nil || g.Ratio < 3.9 || g.Ratio > 4.1 {
		t.Errorf("direct's gain from 1 to 4 clients: %+v", g)
	}
	assertEvents(t, ns, "sweep", "Accepted", "Completed")
}

// waitForUnfinishedJob is the benchmark's one Job that has not finished.
func waitForUnfinishedJob(t *testing.T, ns string) *batchv1.Job {
	t.Helper()
	var found *batchv1.Job
	eventually(t, 20*time.Second, "a running Job", func() error {
		found = nil
		for _, j := range listJobs(t, ns) {
			if !jobFinished(&j) {
				if found != nil {
					return fmt.Errorf("two Jobs run at once: %s and %s", found.Name, j.Name)
				}
				found = &j
			}
		}
		if found == nil {
			return fmt.Errorf("no running Job")
		}
		return nil
	})
	return found
}
