package benchmark

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/admission"
	"github.com/tunnelbench/tunnelbench/internal/operator/metrics"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/operator/statusguard"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// Intervals, overridable in the reconciler (tests shorten them).
const (
	// DefaultServerWait bounds how long a benchmark waits for its Secrets to appear (a
	// CloudNativePG cluster may still be bootstrapping) before it fails.
	DefaultServerWait = 2 * time.Minute
	// DefaultClusterWait bounds how long a benchmark waits for a CloudNativePG Cluster to be
	// ready: initdb, volumes and image pulls.
	DefaultClusterWait = 10 * time.Minute
	// DefaultPollInterval is how often a waiting benchmark looks again: at missing Secrets, and at
	// a running Job's pod for states that never end by themselves (image pull errors).
	DefaultPollInterval = 10 * time.Second
	// DefaultCertificateWait bounds how long the operator waits for cert-manager to issue a
	// Certificate, from the Certificate's creation, before the benchmark fails.
	DefaultCertificateWait = 5 * time.Minute
)

// TunnelBenchmarkReconciler runs TunnelBenchmarks.
type TunnelBenchmarkReconciler struct {
	client.Client
	// APIReader reads Secrets and Pods without caching them, which keeps the operator's RBAC to
	// `get secrets` and `list pods` and its memory free of other workloads' objects.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Metrics   *metrics.Recorder
	Defaults  specs.RunnerDefaults
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ServerWait and PollInterval default to DefaultServerWait and DefaultPollInterval.
	ServerWait   time.Duration
	PollInterval time.Duration
	// ClusterWait defaults to DefaultClusterWait, CertificateWait to DefaultCertificateWait,
	// UnschedulableWait to DefaultUnschedulableWait, ResourceWait to DefaultResourceWait,
	// InjectionWait to DefaultInjectionWait.
	ClusterWait       time.Duration
	CertificateWait   time.Duration
	UnschedulableWait time.Duration
	ResourceWait      time.Duration
	InjectionWait     time.Duration

	// NetworkPolicies has the peers it starts accept only the benchmark's runner pods.
	NetworkPolicies bool
	// Policy is what the operator's administrator allows every benchmark (runner images,
	// privileged transports): the admission webhook's own, checked again before any run, so that
	// it holds whatever the webhook's configuration (disabled, failurePolicy Ignore).
	Policy admission.Policy

	// MaxTimeout bounds spec.timeout (0: no bound): every benchmark ends, and this bounds how long
	// one holds its server and its place (the chart's maxTimeout).
	MaxTimeout time.Duration

	// NodeReaderNamespace and NodeReaderSelector find the chart's node readers, which serve the
	// server pod's CPU accounting to the runner (servercpu.go); an empty namespace runs without
	// them, the server's CPU then unknown.
	NodeReaderNamespace, NodeReaderSelector string

	// LockNamespace is where the servers' Leases are (the operator's namespace; serverlock.go);
	// empty runs without them, ordering benchmarks of one server by their creation alone.
	LockNamespace string

	// MaxRunning is how many benchmarks may run at once in the cluster (0: no limit); the others
	// wait in phase Queued, their clocks not started.
	MaxRunning int
	// MaxRunningPerNamespace is how many of them one namespace may run at once (0: no limit of its
	// own), so that one team cannot hold every place of the cluster.
	MaxRunningPerNamespace int

	// JobsTTL is how long an ended benchmark keeps its Jobs and pods when its spec does not say
	// (spec.ttlSecondsAfterFinished); nil keeps them until the benchmark is deleted.
	JobsTTL *time.Duration

	pending pendingEvents
	// PostgresImage is the PostgreSQL image of managed clusters that name none.
	PostgresImage string
}

// The operator never writes a benchmark's spec and never deletes a Job (garbage collection does,
// through owner references); it deletes only what it made next to the server once that is no
// longer needed: the SSH gateway, poolers, certificates and a managed cluster, found by label
// (list) and deleted only when the benchmark controls them (removeOwned). Secrets are read by
// name, never listed. What each transport's peers need is marked in its own file in
// internal/transport. Updating tunnelbenchmarks/finalizers lets it set blockOwnerDeletion on the
// Jobs it owns where the OwnerReferencesPermissionEnforcement admission plugin is on.
// +kubebuilder:rbac:groups=bench.tunnelbench.io,resources=tunnelbenchmarks,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=bench.tunnelbench.io,resources=tunnelbenchmarks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=bench.tunnelbench.io,resources=tunnelbenchmarks/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups="",resources=events,verbs=list
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;create;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;create;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=postgresql.cnpg.io,resources=clusters,verbs=get;list;create;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile moves one benchmark forward and records what it observed.
func (r *TunnelBenchmarkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tb := &benchv1.TunnelBenchmark{}
	if err := r.Get(ctx, req.NamespacedName, tb); err != nil {
		if apierrors.IsNotFound(err) {
			// Its Jobs go with it through owner references; its metric series and the events
			// of a pass whose status was lost go here.
			r.Metrics.Forget(req.Namespace, req.Name)
			r.pending.take(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("cannot get the benchmark: %w", err)
	}
	// The pass's events are recorded when it ends, unless its status write is lost (pendingEvents).
	statusLost := false
	defer func() {
		if statusLost {
			return
		}
		for _, e := range r.pending.take(req.NamespacedName) {
			e.record()
		}
	}()
	if !tb.DeletionTimestamp.IsZero() {
		r.unlockServer(ctx, tb)
		if controllerutil.ContainsFinalizer(tb, CleanupFinalizer) {
			r.removeOwned(ctx, tb, "")
			return ctrl.Result{}, r.setFinalizer(ctx, tb, false)
		}
		return ctrl.Result{}, nil
	}
	if err := r.setFinalizer(ctx, tb, needsCleanup(tb) && !tb.Status.Phase.IsTerminal()); err != nil {
		return ctrl.Result{}, err
	}

	original := tb.DeepCopy()
	result, err := r.reconcile(ctx, tb)
	tb.Status.ObservedGeneration = tb.Generation
	if !equality.Semantic.DeepEqual(original.Status, tb.Status) {
		// The client fits the status to the CRD's schema (statusguard.Client) and answers 422
		// for what would still be refused, without sending it.
		patch := client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})
		perr := r.Status().Patch(ctx, tb, patch)
		if perr != nil && (apierrors.IsInvalid(perr) || apierrors.IsRequestEntityTooLargeError(perr)) {
			// Never retried as it is: the benchmark ends, the pass's results left out.
			r.refuseStatus(tb, original, perr.Error())
			perr = r.Status().Patch(ctx, tb, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{}))
		}
		if perr != nil {
			statusLost = true
			if apierrors.IsConflict(perr) {
				// Someone wrote in between (or this pass read a stale benchmark): start over
				// from what is stored, with nothing of this pass's outcome acted on.
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, fmt.Errorf("while patching status: %w", perr)
		}
	}
	r.Metrics.Observe(tb)
	if tb.Status.Phase.IsTerminal() && !original.Status.Phase.IsTerminal() {
		// Only once the end is stored: removing the peers of a failure whose status write was
		// lost would have the next pass create them again, and wait on them afresh. A Job still
		// running (a timeout, a failed sidecar) is stopped: its pgbench would load the server
		// while the next benchmark measures it.
		if _, jerr := r.deleteJobs(ctx, tb, func(job *batchv1.Job) bool { return !jobFinished(job) }); jerr != nil {
			log.FromContext(ctx).Error(jerr, "Cannot stop the ended benchmark's running Jobs")
		}
		r.removeOwned(ctx, tb, "")
		if !r.unlockServer(ctx, tb) && err == nil {
			result = ctrl.Result{RequeueAfter: time.Second}
		}
		if _, expires := r.jobsTTL(tb); expires && err == nil {
			// The next pass counts the Jobs' time to live from the stored end (expireJobs).
			result = ctrl.Result{Requeue: true}
		}
	}
	if tb.Status.Phase.IsTerminal() {
		// Ended and cleaned up (removeOwned above): nothing left for the finalizer to wait for.
		if ferr := r.setFinalizer(ctx, tb, false); ferr != nil {
			return ctrl.Result{}, ferr
		}
	}
	return result, err
}

// CleanupFinalizer holds a benchmark that asks cert-manager for certificates until the operator
// has removed what cert-manager wrote for it: cert-manager's Secrets carry no owner reference
// (unless it runs with --enable-certificate-owner-ref), so garbage collection would leave them
// behind; and one with a chaos-mesh link until its NetworkChaos objects are gone (needsCleanup).
// It is set while such a benchmark runs and removed once it has ended and cleaned up.
const CleanupFinalizer = benchv1.CleanupFinalizer

// needsCleanup reports whether garbage collection alone would leave something of the benchmark
// behind: cert-manager's Secrets, or NetworkChaos objects that chaos-mesh's finalizer holds once
// their pod is gone (removeNetworkChaos).
func needsCleanup(tb *benchv1.TunnelBenchmark) bool {
	if tb.Spec.TLS != nil {
		return true
	}
	for _, t := range tb.Spec.Transports {
		if l, err := tb.NetworkFor(t); err == nil && l.Emulated() && l.Emulator == benchv1.EmulatorChaosMesh {
			return true
		}
	}
	return false
}

// setFinalizer adds or removes CleanupFinalizer with a patch of the benchmark's metadata only.
func (r *TunnelBenchmarkReconciler) setFinalizer(ctx context.Context, tb *benchv1.TunnelBenchmark, want bool) error {
	if controllerutil.ContainsFinalizer(tb, CleanupFinalizer) == want {
		return nil
	}
	patch := client.MergeFromWithOptions(tb.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if want {
		controllerutil.AddFinalizer(tb, CleanupFinalizer)
	} else {
		controllerutil.RemoveFinalizer(tb, CleanupFinalizer)
	}
	if err := r.Patch(ctx, tb, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cannot update the benchmark's finalizers: %w", err)
	}
	return nil
}

// reconcile is the ordered list of steps; each returns early while it waits.
func (r *TunnelBenchmarkReconciler) reconcile(ctx context.Context, tb *benchv1.TunnelBenchmark) (ctrl.Result, error) {
	if tb.Status.Phase.IsTerminal() {
		// A pass that read a stale benchmark from the cache right after it ended may have
		// started a peer again: an ended benchmark keeps none.
		r.removeOwned(ctx, tb, "")
		if !r.unlockServer(ctx, tb) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return r.expireJobs(ctx, tb)
	}
	if tb.Spec.Cancel {
		return ctrl.Result{}, r.cancel(ctx, tb)
	}
	if r.MaxTimeout > 0 && tb.TimeoutDuration() > r.MaxTimeout {
		r.fail(tb, conditions.ReasonInvalidSpec, fmt.Sprintf("spec.timeout (%s) is longer than this operator allows (%s, "+
			"the chart's maxTimeout): lower spec.timeout, or ask the operator's administrator", tb.TimeoutDuration(), r.MaxTimeout))
		return ctrl.Result{}, nil
	}
	now := r.now()
	if tb.Status.Phase == "" || tb.Status.Phase == benchv1.PhaseQueued {
		if waits, err := r.queue(ctx, tb); err != nil || waits {
			return ctrl.Result{RequeueAfter: orDefault(r.PollInterval, DefaultPollInterval)}, err
		}
		r.accept(tb, now)
	}
	deadline := tb.Status.StartTime.Add(tb.TimeoutDuration())
	// Past the deadline, a pass still reads what already finished (an operator that was down
	// when the last Job completed must record its result, not a timeout over it), but starts
	// nothing: no server, peer or Job is created, and whatever is missing ends the benchmark.
	expired := !now.Before(deadline)
	if expired && tb.Spec.Server.Managed != nil && tb.Status.ManagedCluster == "" {
		r.fail(tb, conditions.ReasonTimeout, timeoutMessage(tb))
		return ctrl.Result{}, nil
	}

	server, err := r.resolveServer(ctx, tb)
	if err != nil {
		if expired {
			r.fail(tb, conditions.ReasonTimeout, timeoutMessage(tb))
			return ctrl.Result{}, nil
		}
		return r.waitForServer(tb, now, err)
	}
	tb.Status.Server = server.Endpoint()
	r.setCondition(tb, conditions.ServerResolved, metav1.ConditionTrue, conditions.ReasonResolved,
		"connecting to "+server.Endpoint())

	if res, done, err := r.initialize(ctx, tb, server, deadline); !done || err != nil {
		return res, err
	}

	tb.Status.Phase = benchv1.PhaseRunning
	if next, ok := nextRun(tb); ok {
		return r.runTransport(ctx, tb, server, next, deadline)
	}
	r.complete(tb)
	return ctrl.Result{}, nil
}

// runTransport makes one run of a transport, the same way for every type and at every point of
// a sweep: its peers are created (once; they stay up between its rounds and points) and awaited
// (bounded), the run's Job runs, its result is recorded, and after the transport's last run what
// served only it is removed. One run per pass: the pass that records a run ends there (requeued
// at once) and writes the result before the next run's Job is made, so a Job of a later run never
// exists beside an earlier result that a conflicting status write lost (a cancel arriving then
// would end the benchmark without it).
func (r *TunnelBenchmarkReconciler) runTransport(ctx context.Context, tb *benchv1.TunnelBenchmark, server transport.Server,
	p plannedRun, deadline time.Time) (res ctrl.Result, err error) {
	ref := p.ref(tb)
	// The benchmark as it runs at the point: its load and transports carry the point's value.
	at := tb.AtPoint(p.point)
	t := at.Spec.Transports[p.transport]
	if errs := r.Policy.Refusals(tb); len(errs) > 0 {
		r.fail(tb, conditions.ReasonInvalidSpec, errs.ToAggregate().Error())
		return ctrl.Result{}, nil
	}
	tc := r.transportContext(at, server, t)
	if tc.Link, err = tb.NetworkFor(t); err != nil {
		r.fail(tb, conditions.ReasonInvalidSpec, fmt.Sprintf("transport %s: %v", t.Name, err))
		return ctrl.Result{}, nil
	}
	tr, err := transport.For(tc)
	if err != nil {
		r.fail(tb, conditions.ReasonInvalidSpec, err.Error())
		return ctrl.Result{}, nil
	}
	peers, err := tr.Peers()
	if err != nil {
		return ctrl.Result{}, err
	}
	path := peers
	started := r.jobExists(ctx, tb, ref)
	if !r.now().Before(deadline) || started {
		// Peers are needed to start a run, not to read it: past the deadline, or once the
		// run's Job exists (a pass that lost its status write after the transport's last
		// run removed them), the Job is only read (runStep).
		peers = nil
	}
	ready, problem, err := r.ensurePeers(ctx, tb, peers)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case problem != nil:
		r.fail(tb, problemReason(problem, tr.FailureReason()), fmt.Sprintf("transport %s: %s", t.Name, problem.message))
		return ctrl.Result{}, nil
	case !ready:
		return r.poll(tb), nil
	}
	s, err := r.runStepFor(ctx, tb, tc, tr, ref, path, started)
	if err != nil {
		r.fail(tb, conditions.ReasonInvalidSpec, fmt.Sprintf("transport %s: %v", t.Name, err))
		return ctrl.Result{}, nil
	}
	if res, done, err := r.ensureRunnerAccess(ctx, tb, deadline); !done || err != nil {
		return res, err
	}
	out, err := r.runStep(ctx, tb, s, deadline)
	if err != nil {
		return out.requeue, err
	}
	return r.afterStep(ctx, tb, p, s, out, tr, tc.Link)
}

// afterStep carries a run on from its step's outcome: while its Job runs, its emulated link is put
// in place (never a silent un-emulated run: the runner waits for it before it connects) and its
// live figures read; once it ended, what its link needed goes, and the run is recorded or fails
// the benchmark (its peers go with the rest once the failure is stored, in Reconcile).
func (r *TunnelBenchmarkReconciler) afterStep(ctx context.Context, tb *benchv1.TunnelBenchmark, p plannedRun, s step,
	out stepOutcome, tr transport.Transport, link benchv1.Link) (ctrl.Result, error) {
	emulator := r.emulatorFor(s.ref.Transport, link, tr.Hop())
	jobName := specs.JobName(tb, s.ref)
	if out.state == stepRunning {
		problem, err := emulator.whileRunning(ctx, tb, out.seen)
		switch {
		case err != nil:
			return ctrl.Result{}, err
		case problem != nil:
			r.fail(tb, problemReason(problem, conditions.ReasonNetworkEmulationFailed), fmt.Sprintf("%s: %s", s.description, problem.message))
			return ctrl.Result{}, nil
		}
		r.observeLive(ctx, tb, s.ref, jobName)
		return r.liveRequeue(tb, out.requeue), nil
	}
	tb.Status.Live = nil
	emulator.afterRun(ctx, tb, jobName)
	if out.state == stepFailed {
		r.fail(tb, out.reason, fmt.Sprintf("%s: %s", s.description, out.message))
		return ctrl.Result{}, nil
	}
	r.recordStep(ctx, tb, p, s, out, tr, link)
	return ctrl.Result{RequeueAfter: time.Millisecond}, nil
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
	run.ExpectedTPS = pathRate(*tb.PointResults(ref.Point), t.Name)
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
func (r *TunnelBenchmarkReconciler) recordStep(ctx context.Context, tb *benchv1.TunnelBenchmark, p plannedRun, s step,
	out stepOutcome, tr transport.Transport, link benchv1.Link) {
	t := tb.Spec.Transports[p.transport]
	label := runLabel(tb, s.ref)
	job := out.seen.job
	prov := r.provenance(ctx, tb, out.seen.pods, out.report)
	at := placement{node: prov.Node, server: r.observeServer(ctx, tb), peer: r.peerPod(ctx, tb.Namespace, s.peers, tr)}
	measured := benchv1.RunResult{Round: p.round, Job: job.Name, Node: prov.Node, ServerNode: at.serverNode(),
		PeerNode: at.peerNode(), Pods: out.pods}
	measured.Cost, measured.Unmeasured, measured.Limiter = r.runCost(ctx, job, at, out.report)
	result := recordRun(tb, p.point, t, measured, out.report, s.pod)
	if out.report.Copy == nil {
		if err := mergeLatency(result, r.runLatencies(ctx, tb, result, out.report)); err != nil {
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
	summarize(tb)
	if transportDone(tb, t.Name) {
		r.removeOwned(ctx, tb, t.Name)
	}
	reps := tb.Repetitions()
	if c := out.report.Copy; c != nil {
		r.event(tb, corev1.EventTypeNormal, conditions.ReasonRunCompleted, "Measure", "Transport %s round %d/%d: %.3f MB/s, %.0f rows/s",
			label, p.round, reps, c.MBPerSecond, c.RowsPerSecond)
		return
	}
	r.event(tb, corev1.EventTypeNormal, conditions.ReasonRunCompleted, "Measure", "Transport %s round %d/%d: %.1f tps, latency %.3f ms",
		label, p.round, reps, out.report.Result.TPS, out.report.Result.LatencyAvgMs)
}

// transportDone reports whether every run of a transport, at every point, is recorded.
func transportDone(tb *benchv1.TunnelBenchmark, name string) bool {
	for point := range tb.Points() {
		if !benchv1.FindResult(*tb.PointResults(point), name).Done(tb.Repetitions()) {
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
// where missing; done is false while they are being made or after the benchmark failed.
func (r *TunnelBenchmarkReconciler) ensureRunnerAccess(ctx context.Context, tb *benchv1.TunnelBenchmark,
	deadline time.Time) (res ctrl.Result, done bool, err error) {
	if !r.now().Before(deadline) {
		// Nothing is created past the deadline; a finished run is still read.
		return ctrl.Result{}, true, nil
	}
	var peers []transport.Peer
	for _, o := range specs.RunnerAccess(tb) {
		peers = append(peers, transport.Peer{Object: o})
	}
	ready, problem, err := r.ensurePeers(ctx, tb, peers)
	switch {
	case err != nil:
		return ctrl.Result{}, false, err
	case problem != nil:
		r.fail(tb, conditions.ReasonOwnershipConflict, "the runner's API access: "+problem.message)
		return ctrl.Result{}, false, nil
	case !ready:
		return r.poll(tb), false, nil
	}
	return ctrl.Result{}, true, nil
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

// transportContext is what a transport is built from.
func (r *TunnelBenchmarkReconciler) transportContext(tb *benchv1.TunnelBenchmark, server transport.Server,
	t benchv1.TransportSpec) transport.Context {
	return transport.Context{Benchmark: tb, Spec: t, Server: server, Defaults: r.Defaults,
		CertificateWait: orDefault(r.CertificateWait, DefaultCertificateWait), NetworkPolicies: r.NetworkPolicies}
}

// runnerContract is what the runner is told of a run before the transport adds its part.
func (r *TunnelBenchmarkReconciler) runnerContract(tb *benchv1.TunnelBenchmark, init bool) runspec.Run {
	return specs.RunFor(tb, init, r.Defaults.WaitTimeout)
}

// timeoutMessage says that spec.timeout expired, how far the benchmark got and what to do.
func timeoutMessage(tb *benchv1.TunnelBenchmark) string {
	return fmt.Sprintf("the benchmark did not finish within spec.timeout (%s); %s runs done: raise spec.timeout, or "+
		"shorten spec.load.duration or spec.load.repetitions", tb.TimeoutDuration(), tb.Status.Progress)
}

// accept starts the clock of a new benchmark.
func (r *TunnelBenchmarkReconciler) accept(tb *benchv1.TunnelBenchmark, now time.Time) {
	tb.Status.Phase = benchv1.PhasePending
	tb.Status.StartTime = &metav1.Time{Time: now}
	tb.Status.Progress = benchv1.ProgressString(0, tb.TotalRuns())
	tb.Status.RunOrder = plannedOrder(tb)
	tb.PointResults(0) // a sweep's points, empty
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
func (r *TunnelBenchmarkReconciler) waitForServer(tb *benchv1.TunnelBenchmark, now time.Time, err error) (ctrl.Result, error) {
	var se *serverError
	if !errors.As(err, &se) {
		return ctrl.Result{}, err
	}
	if se.Fatal {
		r.setCondition(tb, conditions.ServerResolved, metav1.ConditionFalse, se.Reason, se.Message)
		r.fail(tb, se.Reason, se.Message)
		return ctrl.Result{}, nil
	}
	if wait := orDefault(se.Wait, orDefault(r.ServerWait, DefaultServerWait)); now.Sub(tb.Status.StartTime.Time) >= wait {
		r.setCondition(tb, conditions.ServerResolved, metav1.ConditionFalse, se.Reason, se.Message)
		r.fail(tb, se.Reason, fmt.Sprintf("%s (waited %s)", se.Message, wait))
		return ctrl.Result{}, nil
	}
	if !r.hasCondition(tb, conditions.ServerResolved, metav1.ConditionFalse, se.Reason) {
		r.event(tb, corev1.EventTypeWarning, se.Reason, "ResolveServer", "%s", se.Message)
	}
	r.setCondition(tb, conditions.ServerResolved, metav1.ConditionFalse, se.Reason, se.Message)
	return r.poll(tb), nil
}

// initialize runs `pgbench -i` once when asked. done is false while it runs or after it failed.
func (r *TunnelBenchmarkReconciler) initialize(ctx context.Context, tb *benchv1.TunnelBenchmark,
	server transport.Server, deadline time.Time) (res ctrl.Result, done bool, err error) {
	if !tb.Spec.Load.Initialize {
		r.setCondition(tb, conditions.Initialized, metav1.ConditionFalse, conditions.ReasonNotRequested,
			"spec.load.initialize is false: the pgbench tables must already exist")
		return ctrl.Result{}, true, nil
	}
	if meta.IsStatusConditionTrue(tb.Status.Conditions, conditions.Initialized) {
		return ctrl.Result{}, true, nil
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
	case err != nil || out.state == stepRunning:
		return out.requeue, false, err
	case out.state == stepFailed:
		r.setCondition(tb, conditions.Initialized, metav1.ConditionFalse, out.reason, out.message)
		r.fail(tb, out.reason, fmt.Sprintf("%s: %s", step.description, out.message))
		return ctrl.Result{}, false, nil
	}
	r.setCondition(tb, conditions.Initialized, metav1.ConditionTrue, conditions.ReasonInitialized, step.description+" succeeded")
	r.event(tb, corev1.EventTypeNormal, conditions.ReasonInitialized, "Initialize", "%s succeeded", step.description)
	return ctrl.Result{}, true, nil
}

// complete ends a benchmark whose every transport has a result.
func (r *TunnelBenchmarkReconciler) complete(tb *benchv1.TunnelBenchmark) {
	tb.Status.Phase = benchv1.PhaseCompleted
	tb.Status.CompletionTime = &metav1.Time{Time: r.now()}
	tb.Status.Live = nil
	msg := fmt.Sprintf("%d transports measured, %d repetitions each", len(tb.Status.Results), tb.Repetitions())
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

func (r *TunnelBenchmarkReconciler) setCondition(tb *benchv1.TunnelBenchmark, typ string,
	status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&tb.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: bounded.Text(message, bounded.ConditionMessage),
		ObservedGeneration: tb.Generation,
	})
}

func (r *TunnelBenchmarkReconciler) hasCondition(tb *benchv1.TunnelBenchmark, typ string,
	status metav1.ConditionStatus, reason string) bool {
	c := meta.FindStatusCondition(tb.Status.Conditions, typ)
	return c != nil && c.Status == status && c.Reason == reason
}

func (r *TunnelBenchmarkReconciler) event(tb *benchv1.TunnelBenchmark, eventType, reason, action, note string, args ...any) {
	if r.Recorder == nil {
		return
	}
	text := bounded.Text(fmt.Sprintf(note, args...), bounded.EventNote)
	key := eventType + "/" + reason + "/" + text
	r.pending.add(client.ObjectKeyFromObject(tb), key, func() { r.Recorder.Eventf(tb, nil, eventType, reason, action, "%s", text) })
}

// pendingEvents holds a pass's events until its status is stored. A pass whose status write
// conflicts is started over from what is stored and does the same things again: its events are
// kept, and the next pass's identical ones are not added again, so that an event shows once
// ("Accepted", not "Accepted (x2)") while one about what only the lost pass did (the Job it
// created) is still recorded. controller-runtime never reconciles one benchmark in two workers at
// once, so a benchmark's pending events are one pass's and its retries'.
type pendingEvents struct {
	mu    sync.Mutex
	byKey map[types.NamespacedName][]pendingEvent
}

type pendingEvent struct {
	key    string
	record func()
}

func (p *pendingEvents) add(tb types.NamespacedName, key string, record func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byKey == nil {
		p.byKey = map[types.NamespacedName][]pendingEvent{}
	}
	for _, e := range p.byKey[tb] {
		if e.key == key {
			return
		}
	}
	p.byKey[tb] = append(p.byKey[tb], pendingEvent{key: key, record: record})
}

// take removes and returns the benchmark's pending events.
func (p *pendingEvents) take(tb types.NamespacedName) []pendingEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.byKey[tb]
	delete(p.byKey, tb)
	return out
}

// podWaits are the bounds of a pod's wait for a node.
func (r *TunnelBenchmarkReconciler) podWaits() podWaits {
	return podWaits{unschedulable: orDefault(r.UnschedulableWait, DefaultUnschedulableWait),
		resources: orDefault(r.ResourceWait, DefaultResourceWait)}
}

// poll is the requeue of a benchmark that waits: the poll interval, or sooner when the deadline
// comes first, so that a timeout is noticed when it happens.
func (r *TunnelBenchmarkReconciler) poll(tb *benchv1.TunnelBenchmark) ctrl.Result {
	after := orDefault(r.PollInterval, DefaultPollInterval)
	if tb.Status.StartTime != nil {
		untilDeadline := tb.Status.StartTime.Add(tb.TimeoutDuration()).Sub(r.now())
		after = max(min(after, untilDeadline+100*time.Millisecond), 100*time.Millisecond)
	}
	return ctrl.Result{RequeueAfter: after}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (r *TunnelBenchmarkReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the controller. It watches the Jobs it owns, so a finished Job
// wakes its benchmark at once.
func (r *TunnelBenchmarkReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	// Every status write is fitted to the CRD's schema and every event to the Event API's bounds.
	r.Client, r.Recorder = statusguard.Client(r.Client), statusguard.Recorder(r.Recorder)
	return ctrl.NewControllerManagedBy(mgr).
		WithOptions(opts).
		For(&benchv1.TunnelBenchmark{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		Owns(&appsv1.Deployment{}).
		Named("tunnelbenchmark").
		Complete(r)
}
