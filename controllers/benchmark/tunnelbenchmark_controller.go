package benchmark

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/admission"
	"github.com/tunnelbench/tunnelbench/internal/operator/metrics"
	"github.com/tunnelbench/tunnelbench/internal/operator/results"
	"github.com/tunnelbench/tunnelbench/internal/operator/runorder"
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
	// wakeups carries the queued benchmarks to look at again once another ended (wakeQueued).
	wakeups chan event.TypedGenericEvent[*benchv1.TunnelBenchmark]
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
	result, err := passResult(r.reconcile(ctx, tb))
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
		// Its place in the namespace's and the cluster's limits is free (its server's, once the
		// Lease is released: unlockServer wakes them again then).
		r.wakeQueued(tb)
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
func (r *TunnelBenchmarkReconciler) reconcile(ctx context.Context, tb *benchv1.TunnelBenchmark) error {
	if tb.Status.Phase.IsTerminal() {
		// A pass that read a stale benchmark from the cache right after it ended may have
		// started a peer again: an ended benchmark keeps none.
		r.removeOwned(ctx, tb, "")
		if !r.unlockServer(ctx, tb) {
			return nextPass(ctrl.Result{RequeueAfter: time.Second})
		}
		return r.expireJobs(ctx, tb)
	}
	if tb.Spec.Cancel {
		return r.cancel(ctx, tb)
	}
	if r.MaxTimeout > 0 && tb.TimeoutDuration() > r.MaxTimeout {
		return r.end(tb, conditions.ReasonInvalidSpec, fmt.Sprintf("spec.timeout (%s) is longer than this operator allows (%s, "+
			"the chart's maxTimeout): lower spec.timeout, or ask the operator's administrator", tb.TimeoutDuration(), r.MaxTimeout))
	}
	if errs := r.Policy.Refusals(tb); len(errs) > 0 {
		// What the webhook refuses, refused again before anything runs: a benchmark created
		// while the webhook was off or failing open, or one the policy changed under.
		return r.end(tb, conditions.ReasonInvalidSpec, errs.ToAggregate().Error())
	}
	now := r.now()
	if tb.Status.Phase == "" || tb.Status.Phase == benchv1.PhaseQueued {
		if err := r.queue(ctx, tb); err != nil {
			return err
		}
		r.accept(tb, now)
	}
	deadline := tb.Status.StartTime.Add(tb.TimeoutDuration())
	// Past the deadline, a pass still reads what already finished (an operator that was down
	// when the last Job completed must record its result, not a timeout over it), but starts
	// nothing: no server, peer or Job is created, and whatever is missing ends the benchmark.
	expired := !now.Before(deadline)
	if expired && tb.Spec.Server.Managed != nil && tb.Status.ManagedCluster == "" {
		return r.end(tb, conditions.ReasonTimeout, timeoutMessage(tb))
	}

	server, err := r.resolveServer(ctx, tb)
	if err != nil {
		if expired {
			return r.end(tb, conditions.ReasonTimeout, timeoutMessage(tb))
		}
		return r.waitForServer(tb, now, err)
	}
	tb.Status.Server = server.Endpoint()
	r.setCondition(tb, conditions.ServerResolved, metav1.ConditionTrue, conditions.ReasonResolved,
		"connecting to "+server.Endpoint())

	if err := r.initialize(ctx, tb, server, deadline); err != nil {
		return err
	}

	tb.Status.Phase = benchv1.PhaseRunning
	if next, ok := runorder.Next(tb); ok {
		if !results.RoundOverruns(tb, next.Round, now, deadline) {
			return r.runTransport(ctx, tb, server, next, deadline)
		}
		results.StopShort(tb, fmt.Sprintf("another round would pass spec.timeout (%s)", tb.TimeoutDuration()))
	}
	r.complete(tb)
	return nil
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
// wakes its benchmark at once, and the wake-ups of queued benchmarks (wakeQueued), so a benchmark
// that ended lets the next one start at once.
func (r *TunnelBenchmarkReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	// Every status write is fitted to the CRD's schema and every event to the Event API's bounds.
	r.Client, r.Recorder = statusguard.Client(r.Client), statusguard.Recorder(r.Recorder)
	r.wakeups = make(chan event.TypedGenericEvent[*benchv1.TunnelBenchmark], wakeupBuffer)
	return ctrl.NewControllerManagedBy(mgr).
		WithOptions(opts).
		For(&benchv1.TunnelBenchmark{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		Owns(&appsv1.Deployment{}).
		WatchesRawSource(source.Channel(r.wakeups, r.wakeQueuedHandler())).
		Named("tunnelbenchmark").
		Complete(r)
}
