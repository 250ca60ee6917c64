package benchmark

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// serverKey names the server a benchmark measures, from its spec alone (no lookup), so that every
// benchmark's key is known before any of them starts: the host as the cluster's DNS would resolve
// it from the benchmark's namespace, and the port. A CloudNativePG cluster is keyed by its -rw
// Service, so that a benchmark naming the cluster and one naming its Service by host meet. The
// database is left out: two databases of one server still share its CPU.
func serverKey(tb *benchv1.TunnelBenchmark) string {
	s := tb.Spec.Server
	host, port := "", s.EffectivePort()
	switch {
	case s.External != nil:
		host = s.External.Host
	case s.CNPG != nil || s.Managed != nil:
		host = s.CNPGClusterName(tb) + transport.CNPGRWSuffix
	default:
		return ""
	}
	host = strings.TrimSuffix(strings.ToLower(strings.TrimSuffix(host, ".")), ".cluster.local")
	// The pod's DNS search list completes "svc" and "svc.namespace" alike; keying them alike is what
	// matters (an external "db.example" becomes "db.example.svc" on both sides of a comparison).
	switch strings.Count(host, ".") {
	case 0:
		host += "." + tb.Namespace + ".svc"
	case 1:
		host += ".svc"
	}
	return host + ":" + strconv.Itoa(int(port))
}

// ahead returns the benchmark that must end before tb may start, or nil: the oldest exclusive
// benchmark of the same server that has not ended and was created before tb (ties broken by
// namespace/name). The order is derived from the benchmarks themselves, so an operator restarted
// with benchmarks queued resumes the same order.
func ahead(tb *benchv1.TunnelBenchmark, all []benchv1.TunnelBenchmark) *benchv1.TunnelBenchmark {
	if !tb.IsExclusive() {
		return nil
	}
	key := serverKey(tb)
	var first *benchv1.TunnelBenchmark
	for i := range all {
		o := &all[i]
		if o.UID == tb.UID || !o.IsExclusive() || o.Status.Phase.IsTerminal() || !o.DeletionTimestamp.IsZero() ||
			serverKey(o) != key || !before(o, tb) {
			continue
		}
		if first == nil || before(o, first) {
			first = o
		}
	}
	return first
}

// before orders benchmarks by creation time, then by namespace/name.
func before(a, b *benchv1.TunnelBenchmark) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}

// started reports whether a benchmark has left the queue and not ended.
func started(tb *benchv1.TunnelBenchmark) bool {
	switch tb.Status.Phase {
	case benchv1.PhasePending, benchv1.PhaseInitializing, benchv1.PhaseRunning:
		return true
	}
	return false
}

// aheadInCluster counts the benchmarks that hold or take a place under the cluster-wide limit before
// tb: those started, and those older than tb that wait only for the limit (their server free, and
// their namespace under its own limit perNamespace). Counting the second kind keeps the order first
// come, first served across concurrent passes; not counting those their namespace holds back lets
// another namespace's benchmark take the place one namespace may not.
func aheadInCluster(tb *benchv1.TunnelBenchmark, all []benchv1.TunnelBenchmark, perNamespace int) int {
	n := 0
	for i := range all {
		o := &all[i]
		if !inLine(o, tb) {
			continue
		}
		if started(o) || (before(o, tb) && ahead(o, all) == nil &&
			(perNamespace <= 0 || aheadInNamespace(o, all) < perNamespace)) {
			n++
		}
	}
	return n
}

// aheadInNamespace counts, among the benchmarks of tb's namespace, those that hold or take a place
// before tb, as aheadInCluster does in the cluster.
func aheadInNamespace(tb *benchv1.TunnelBenchmark, all []benchv1.TunnelBenchmark) int {
	n := 0
	for i := range all {
		o := &all[i]
		if o.Namespace == tb.Namespace && inLine(o, tb) && (started(o) || (before(o, tb) && ahead(o, all) == nil)) {
			n++
		}
	}
	return n
}

// inLine reports whether o, another benchmark than tb, may hold a place: not ended, deleted or
// cancelled.
func inLine(o, tb *benchv1.TunnelBenchmark) bool {
	return o.UID != tb.UID && !o.Status.Phase.IsTerminal() && o.DeletionTimestamp.IsZero() && !o.Spec.Cancel
}

// queue holds a benchmark that has not started while another benchmark of its server is ahead of
// it, while its namespace runs MaxRunningPerNamespace benchmarks, or while the cluster runs
// MaxRunning: the pass stops there while it waits, and goes on once it leaves; its clock
// (spec.timeout) starts then.
func (r *TunnelBenchmarkReconciler) queue(ctx context.Context, tb *benchv1.TunnelBenchmark) error {
	list := &benchv1.TunnelBenchmarkList{}
	if err := r.List(ctx, list); err != nil {
		return fmt.Errorf("cannot list the benchmarks to queue behind: %w", err)
	}
	reason, msg := "", ""
	if first := ahead(tb, list.Items); first != nil {
		reason = conditions.ReasonWaitingForServer
		msg = fmt.Sprintf("benchmark %s/%s (%s) measures the same server (%s); this one starts when it ends",
			first.Namespace, first.Name, first.Status.Phase, serverKey(tb))
	} else if n := aheadInNamespace(tb, list.Items); r.MaxRunningPerNamespace > 0 && n >= r.MaxRunningPerNamespace {
		reason, msg = conditions.ReasonNamespaceLimit, fmt.Sprintf("%d benchmarks of namespace %s run or are ahead in line, and a namespace "+
			"runs at most %d at once (the chart's maxRunningBenchmarksPerNamespace); this one starts when one of them ends",
			n, tb.Namespace, r.MaxRunningPerNamespace)
	} else if n := aheadInCluster(tb, list.Items, r.MaxRunningPerNamespace); r.MaxRunning > 0 && n >= r.MaxRunning {
		reason = conditions.ReasonClusterLimit
		msg = fmt.Sprintf("%d benchmarks run or are ahead in line, and the operator runs at most %d at once "+
			"(the chart's maxRunningBenchmarks); this one starts when a place frees up", n, r.MaxRunning)
	}
	if reason == "" {
		// The Lease is the lock; the order above only decides who asks for it first.
		held, err := r.lockServer(ctx, tb)
		if err != nil {
			return err
		}
		if held != "" {
			reason, msg = conditions.ReasonWaitingForServer, held
		}
	}
	if reason == "" {
		if tb.Status.Phase == benchv1.PhaseQueued {
			r.setCondition(tb, conditions.Queued, metav1.ConditionFalse, conditions.ReasonDequeued, "its server is free and a place too")
		}
		return nil
	}
	if c := meta.FindStatusCondition(tb.Status.Conditions, conditions.Queued); tb.Status.Phase != benchv1.PhaseQueued ||
		c == nil || c.Reason != reason {
		r.event(tb, "Normal", conditions.ReasonQueued, "Queue", "%s", msg)
	}
	tb.Status.Phase = benchv1.PhaseQueued
	r.setCondition(tb, conditions.Queued, metav1.ConditionTrue, reason, msg)
	return nextPass(ctrl.Result{RequeueAfter: orDefault(r.PollInterval, DefaultPollInterval)})
}

// queuedBehind are the benchmarks to look at again once ended has freed a place (its server's
// Lease, a place of its namespace or of the cluster): every other one waiting in phase Queued. The
// wake-up only brings their next pass forward; queue decides, as on the poll, who goes, so that
// waking one whose turn has not come costs a pass and nothing else.
func queuedBehind(ended *benchv1.TunnelBenchmark, all []benchv1.TunnelBenchmark) []*benchv1.TunnelBenchmark {
	var out []*benchv1.TunnelBenchmark
	for i := range all {
		if o := &all[i]; o.UID != ended.UID && o.Status.Phase == benchv1.PhaseQueued && o.DeletionTimestamp.IsZero() {
			out = append(out, o)
		}
	}
	return out
}

// wakeupBuffer bounds the ends waiting to wake the queue; past it a queued benchmark waits for its
// poll, as it did before wake-ups.
const wakeupBuffer = 256

// cacheCatchUp bounds how long a wake-up waits for the cache to see the end that caused it:
// queue decides from the cache, and a benchmark woken before the cache saw the end would find it
// still ahead and wait for its poll after all.
const cacheCatchUp = 2 * time.Second

// wakeQueued has the queued benchmarks look again now that ended freed a place, rather than at
// their next poll (PollInterval, 10 s by default): a benchmark of a busy server starts when the
// server is free, not up to a poll later. It never blocks the pass (wakeQueuedHandler does the
// waiting).
func (r *TunnelBenchmarkReconciler) wakeQueued(ended *benchv1.TunnelBenchmark) {
	if r.wakeups == nil {
		return
	}
	select {
	case r.wakeups <- event.TypedGenericEvent[*benchv1.TunnelBenchmark]{Object: ended.DeepCopy()}:
	default: // full: the queued benchmarks' polls come anyway
	}
}

// wakeQueuedHandler turns an end into passes of the benchmarks queued behind it, once the cache
// has seen the end (or cacheCatchUp has passed). It runs in the wake-ups' own goroutine, not in a
// pass.
func (r *TunnelBenchmarkReconciler) wakeQueuedHandler() handler.TypedEventHandler[*benchv1.TunnelBenchmark, reconcile.Request] {
	return handler.TypedFuncs[*benchv1.TunnelBenchmark, reconcile.Request]{
		GenericFunc: func(ctx context.Context, e event.TypedGenericEvent[*benchv1.TunnelBenchmark],
			q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			ended := e.Object
			deadline := time.Now().Add(cacheCatchUp)
			for !r.cacheSawEnd(ctx, ended) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			list := &benchv1.TunnelBenchmarkList{}
			if err := r.List(ctx, list); err != nil {
				log.FromContext(ctx).Error(err, "Cannot list the queued benchmarks to wake; they look again at their next poll")
				return
			}
			for _, o := range queuedBehind(ended, list.Items) {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}})
			}
		},
	}
}

// cacheSawEnd reports whether the cache holds ended as ended, being deleted, or gone.
func (r *TunnelBenchmarkReconciler) cacheSawEnd(ctx context.Context, ended *benchv1.TunnelBenchmark) bool {
	got := &benchv1.TunnelBenchmark{}
	err := r.Get(ctx, types.NamespacedName{Namespace: ended.Namespace, Name: ended.Name}, got)
	if err != nil {
		return apierrors.IsNotFound(err)
	}
	return got.UID != ended.UID || got.Status.Phase.IsTerminal() || !got.DeletionTimestamp.IsZero()
}
