package benchmark

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/operator/results"
	"github.com/tunnelbench/tunnelbench/internal/operator/runorder"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// runTransport makes one run of a transport, the same way for every type and at every point of
// a sweep: its peers are created (once; they stay up between its rounds and points) and awaited
// (bounded), the run's Job runs, its result is recorded, and after the transport's last run what
// served only it is removed. One run per pass: the pass that records a run ends there (requeued
// at once) and writes the result before the next run's Job is made, so a Job of a later run never
// exists beside an earlier result that a conflicting status write lost (a cancel arriving then
// would end the benchmark without it).
func (r *TunnelBenchmarkReconciler) runTransport(ctx context.Context, tb *benchv1.TunnelBenchmark, server transport.Server,
	p runorder.Run, deadline time.Time) (err error) {
	ref := p.Ref(tb)
	// The benchmark as it runs at the point: its load and transports carry the point's value.
	at := tb.AtPoint(p.Point)
	t := at.Spec.Transports[p.Transport]
	tc := r.transportContext(at, server, t)
	if tc.Link, err = tb.NetworkFor(t); err != nil {
		return r.end(tb, conditions.ReasonInvalidSpec, fmt.Sprintf("transport %s: %v", t.Name, err))
	}
	tr, err := transport.For(tc)
	if err != nil {
		return r.end(tb, conditions.ReasonInvalidSpec, err.Error())
	}
	peers, err := tr.Peers()
	if err != nil {
		return err
	}
	path := peers
	started := r.jobExists(ctx, tb, ref)
	if !r.now().Before(deadline) || started {
		// Peers are needed to start a run, not to read it: past the deadline, or once the
		// run's Job exists (a pass that lost its status write after the transport's last
		// run removed them), the Job is only read (runStep).
		peers = nil
	}
	if err := r.ensurePeers(ctx, tb, peers); err != nil {
		return r.endOnPeerProblem(tb, err, tr.FailureReason(), "transport "+t.Name)
	}
	s, err := r.runStepFor(ctx, tb, tc, tr, ref, path, started)
	if err != nil {
		return r.end(tb, conditions.ReasonInvalidSpec, fmt.Sprintf("transport %s: %v", t.Name, err))
	}
	if err := r.ensureRunnerAccess(ctx, tb, deadline); err != nil {
		return err
	}
	out, err := r.runStep(ctx, tb, s, deadline)
	if err != nil {
		return err
	}
	return r.afterStep(ctx, tb, p, s, out, tr, tc.Link)
}

// afterStep carries a run on from its step's outcome: while its Job runs, its emulated link is put
// in place (never a silent un-emulated run: the runner waits for it before it connects) and its
// live figures read; once it ended, what its link needed goes, and the run is recorded or fails
// the benchmark (its peers go with the rest once the failure is stored, in Reconcile).
func (r *TunnelBenchmarkReconciler) afterStep(ctx context.Context, tb *benchv1.TunnelBenchmark, p runorder.Run, s step,
	out stepOutcome, tr transport.Transport, link benchv1.Link) error {
	emulator := r.emulatorFor(s.ref.Transport, link, tr.Hop())
	jobName := specs.JobName(tb, s.ref)
	if out.state == stepRunning {
		if err := emulator.whileRunning(ctx, tb, out.seen); err != nil {
			return r.endOnPeerProblem(tb, err, conditions.ReasonNetworkEmulationFailed, s.description)
		}
		r.observeLive(ctx, tb, s.ref, jobName)
		return nextPass(r.liveRequeue(tb, out.requeue))
	}
	tb.Status.Live = nil
	emulator.afterRun(ctx, tb, jobName)
	if out.state == stepFailed {
		return r.end(tb, out.reason, fmt.Sprintf("%s: %s", s.description, out.message))
	}
	r.recordStep(ctx, tb, p, s, out, tr, link)
	// The next run's Job waits for this pass's status write (runTransport).
	return nextPass(ctrl.Result{RequeueAfter: time.Millisecond})
}

// runStepFor is the step of a run: the runner's contract and pod at the run's point, with the
// transport's part, its link and the parts whose CPU the run measures.
func (r *TunnelBenchmarkReconciler) runStepFor(ctx context.Context, tb *benchv1.TunnelBenchmark, tc transport.Context,
	tr transport.Transport, ref benchv1.RunRef, path []transport.Peer, started bool) (step, error) {
	t := tc.Spec
	run := r.runnerContract(tc.Benchmark, false)
	if ref.Round < tb.Repetitions() {
		// The result keeps the latest run's storm: the earlier rounds would only add its time.
		run.Storm = 0
	}
	run.ExpectedTPS = results.PathRate(tb.ResultsAt(ref.Point), t.Name)
	pod, err := tr.Pod(&run)
	if err != nil {
		return step{}, err
	}
	transport.WithLink(tc, tr, &pod, &run)
	transport.MeasureSidecars(&pod, &run)
	if !started {
		// Where the server's pod is, is looked up for the Job about to be made, not at every pass.
		if part, why := r.serverPart(r.observeServer(ctx, tb)); why == "" {
			run.CPUParts = append(run.CPUParts, part)
		}
		run.CPUParts = append(run.CPUParts, r.nodeReadParts(ctx, tb.Namespace, tr)...)
	}
	return step{
		ref: ref, pod: pod, run: run, peers: path, transport: tr,
		description: fmt.Sprintf("transport %s round %d/%d (%s)", runLabel(tb, ref), ref.Round, tb.Repetitions(), t.Type),
	}, nil
}

// runLabel names a run's transport, with its sweep's point when there is one: "ssh" or
// "ssh at clients=16".
func runLabel(tb *benchv1.TunnelBenchmark, ref benchv1.RunRef) string {
	if point := tb.PointName(ref.Point); point != "" {
		return ref.Transport + " at " + point
	}
	return ref.Transport
}

// recordStep records a succeeded run: its figures, what it cost and where it ran, in its point's
// results; the warnings it calls for; the summaries; and, after the transport's last run, the
// removal of what served only it.
func (r *TunnelBenchmarkReconciler) recordStep(ctx context.Context, tb *benchv1.TunnelBenchmark, p runorder.Run, s step,
	out stepOutcome, tr transport.Transport, link benchv1.Link) {
	t := tb.Spec.Transports[p.Transport]
	label := runLabel(tb, s.ref)
	job := out.seen.job
	prov := r.provenance(ctx, tb, out.seen.pods, out.report)
	at := placement{node: prov.Node, server: r.observeServer(ctx, tb), peer: r.peerPod(ctx, tb.Namespace, s.peers, tr)}
	measured := benchv1.RunResult{Round: p.Round, Job: job.Name, Node: prov.Node, ServerNode: at.serverNode(),
		PeerNode: at.peerNode(), Pods: out.pods}
	var cycleMs *float64 // a budget splits one closed loop's round trip; a run of several pods is several
	if res := out.report.Result; res != nil && len(out.pods) <= 1 {
		cycleMs = results.CycleMs(tb, res)
	}
	var costs runCosts
	costs, measured.Limiter = r.runCost(ctx, job, at, out.report, cycleMs)
	measured.Cost, measured.Unmeasured, measured.Budget = costs.parts, costs.unmeasured, costs.budget
	result := results.Record(tb, p.Point, t, measured, out.report, s.pod)
	if out.report.Copy == nil {
		if err := results.MergeLatency(result, r.runLatencies(ctx, tb, result, out.report)); err != nil {
			log.FromContext(ctx).Error(err, "Cannot merge the latency histograms", "transport", t.Name)
		}
	}
	result.Unguarded = !tb.IsExclusive()
	result.Provenance = prov
	latest := result.Runs[len(result.Runs)-1]
	r.warnSharedNode(tb, label, prov)
	r.warnClientBound(tb, label, measured)
	r.warnFailedTransactions(tb, label, latest)
	r.warnSkippedTransactions(tb, label, latest)
	r.warnNotSteady(tb, label, latest)
	r.warnLatencyInconsistent(tb, label, latest)
	tr.Record(out.report, result)
	result.Path = bounded.Text(tr.Describe(result), benchv1.MaxPathDescription)
	recordLink(result, link, tr.Hop().What, out.report.Link)
	r.judgeLinks(tb)
	results.Summarize(tb)
	if transportDone(tb, t.Name) {
		r.removeOwned(ctx, tb, t.Name)
	}
	reps := tb.Repetitions()
	if c := out.report.Copy; c != nil {
		r.event(tb, corev1.EventTypeNormal, conditions.ReasonRunCompleted, "Measure", "Transport %s round %d/%d: %.3f MB/s, %.0f rows/s",
			label, p.Round, reps, c.MBPerSecond, c.RowsPerSecond)
		return
	}
	r.event(tb, corev1.EventTypeNormal, conditions.ReasonRunCompleted, "Measure", "Transport %s round %d/%d: %.1f tps, latency %.3f ms",
		label, p.Round, reps, out.report.Result.TPS, out.report.Result.LatencyAvgMs)
}

// transportDone reports whether every run of a transport, at every point, is recorded.
func transportDone(tb *benchv1.TunnelBenchmark, name string) bool {
	for point := range tb.Points() {
		if !benchv1.FindResult(tb.ResultsAt(point), name).Done(tb.Rounds()) {
			return false
		}
	}
	return true
}

// jobExists reports whether the Job of a run exists (in the cache).
func (r *TunnelBenchmarkReconciler) jobExists(ctx context.Context, tb *benchv1.TunnelBenchmark, ref benchv1.RunRef) bool {
	key := types.NamespacedName{Namespace: tb.Namespace, Name: specs.JobName(tb, ref)}
	return r.Get(ctx, key, &batchv1.Job{}) == nil
}

// ensureRunnerAccess creates the runner's ServiceAccount, Role and RoleBinding (specs.RunnerAccess)
// where missing; the pass goes on once they exist.
func (r *TunnelBenchmarkReconciler) ensureRunnerAccess(ctx context.Context, tb *benchv1.TunnelBenchmark,
	deadline time.Time) error {
	if !r.now().Before(deadline) {
		// Nothing is created past the deadline; a finished run is still read.
		return nil
	}
	var peers []transport.Peer
	for _, o := range specs.RunnerAccess(tb) {
		peers = append(peers, transport.Peer{Object: o})
	}
	if err := r.ensurePeers(ctx, tb, peers); err != nil {
		return r.endOnPeerProblem(tb, err, conditions.ReasonOwnershipConflict, "the runner's API access")
	}
	return nil
}

// runLatencies are the latency histograms of a transport's runs, the latest from its report and
// the earlier ones from their result ConfigMaps.
func (r *TunnelBenchmarkReconciler) runLatencies(ctx context.Context, tb *benchv1.TunnelBenchmark,
	res *benchv1.TransportResult, latest *report.Report) []*report.Latency {
	out := make([]*report.Latency, 0, len(res.Runs))
	for _, run := range res.Runs[:len(res.Runs)-1] {
		var l *report.Latency
		if rep := r.storedReport(ctx, tb.Namespace, run.Job); rep != nil {
			l = rep.Latency
		}
		out = append(out, l)
	}
	return append(out, latest.Latency)
}
