package benchmark

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// peerProblem is why a peer will not become ready by itself: an error that ends the benchmark
// (endOnPeerProblem), never retried.
type peerProblem struct {
	// notOwned marks an object of the peer's name that this benchmark does not control.
	notOwned bool
	// reason, when set, overrides the transport's failure reason (Unschedulable).
	reason  string
	message string
}

func (p *peerProblem) Error() string { return p.message }

// endOnPeerProblem ends the benchmark when err is a peer's problem, with the problem's reason (or
// fallback) and its message after what; any other error, a stop included, is returned as it is.
func (r *TunnelBenchmarkReconciler) endOnPeerProblem(tb *benchv1.TunnelBenchmark, err error, fallback, what string) error {
	var problem *peerProblem
	if errors.As(err, &problem) {
		return r.end(tb, problemReason(problem, fallback), what+": "+problem.message)
	}
	return err
}

// ensurePeers creates a transport's peers where missing, in order; the pass goes on once all of
// them are ready, and stops at the first one that is not (until the next poll), or that has a
// problem (a *peerProblem).
func (r *TunnelBenchmarkReconciler) ensurePeers(ctx context.Context, tb *benchv1.TunnelBenchmark,
	peers []transport.Peer) error {
	for _, p := range peers {
		ready, err := r.ensurePeer(ctx, tb, p)
		if err != nil {
			return err
		}
		if !ready {
			return nextPass(r.poll(tb))
		}
	}
	return nil
}

// ensurePeer creates one peer when it is missing and judges it otherwise. An object of the peer's
// name that the benchmark does not control (someone else's, or another benchmark's) is never used:
// it is a problem (a *peerProblem), reported at once, naming the object and its owner.
func (r *TunnelBenchmarkReconciler) ensurePeer(ctx context.Context, tb *benchv1.TunnelBenchmark,
	p transport.Peer) (ready bool, err error) {
	kind := r.kindOf(p.Object)
	stored := emptyLike(p.Object)
	// The uncached reader: peers of optional kinds (CloudNativePG's, cert-manager's) must not
	// start informers, and a just-deleted object must not be found in a stale cache.
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(p.Object), stored)
	switch {
	case meta.IsNoMatchError(err):
		return false, &peerProblem{message: notInstalled(p, kind)}
	case apierrors.IsNotFound(err):
		return r.createPeer(ctx, tb, p, kind)
	case err != nil:
		return false, fmt.Errorf("cannot get %s %s: %w", kind, p.Object.GetName(), err)
	}
	if ofEarlierBenchmark(stored, tb) {
		r.setCondition(tb, conditions.Progressing, metav1.ConditionTrue, conditions.ReasonWaiting, leftoverMessage(kind, stored))
		return false, nil
	}
	if !metav1.IsControlledBy(stored, tb) {
		return false, &peerProblem{notOwned: true, message: notOwnedMessage(kind, stored)}
	}
	if !stored.GetDeletionTimestamp().IsZero() {
		// Removed at the end of an earlier run of this transport: wait until it is gone.
		return false, nil
	}
	if p.Ready == nil {
		return true, nil
	}
	st, err := p.Ready(ctx, peerCluster{r: r, namespace: tb.Namespace}, stored)
	switch {
	case err != nil:
		return false, err
	case st.Problem != "":
		return false, &peerProblem{reason: st.Reason, message: st.Problem}
	case !st.Ready && st.Waiting != "":
		r.setCondition(tb, conditions.Progressing, metav1.ConditionTrue, conditions.ReasonWaiting, st.Waiting)
	}
	return st.Ready, nil
}

func (r *TunnelBenchmarkReconciler) createPeer(ctx context.Context, tb *benchv1.TunnelBenchmark, p transport.Peer,
	kind string) (bool, error) {
	if p.Generate != nil {
		if err := p.Generate(); err != nil {
			return false, fmt.Errorf("cannot make %s %s: %w", kind, p.Object.GetName(), err)
		}
	}
	err := r.Create(ctx, p.Object)
	switch {
	case meta.IsNoMatchError(err):
		return false, &peerProblem{message: notInstalled(p, kind)}
	case apierrors.IsAlreadyExists(err):
		// Created in between: judged on the next pass, like any existing object.
		return false, nil
	case apierrors.IsInvalid(err):
		why, _ := refusedAsInvalid(kind, p.Object.GetName(), err)
		return false, &peerProblem{reason: conditions.ReasonInvalidSpec, message: why}
	case err != nil:
		return false, fmt.Errorf("cannot create %s %s: %w", kind, p.Object.GetName(), err)
	}
	if p.Created != nil {
		reason, note := p.Created()
		r.event(tb, corev1.EventTypeNormal, reason, "Provision", "%s", note)
	}
	return p.Ready == nil, nil
}

func notInstalled(p transport.Peer, kind string) string {
	if p.NotInstalled != "" {
		return p.NotInstalled
	}
	return fmt.Sprintf("the %s kind is not installed in this cluster", kind)
}

// ofEarlierBenchmark reports whether o belongs to an earlier benchmark of this one's name, deleted
// (two benchmarks of one name cannot exist at once): delete and re-apply creates the new one
// while the garbage collector is still removing the old one's objects, which have the same
// derived names. They go by themselves; the new benchmark waits for them instead of failing
// OwnershipConflict. Their owner reference names the kind, the name and the old UID.
func ofEarlierBenchmark(o metav1.Object, tb *benchv1.TunnelBenchmark) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.Kind == "TunnelBenchmark" && ref.Name == tb.Name && ref.UID != tb.UID &&
		ref.APIVersion == benchv1.GroupVersion.String()
}

// leftoverMessage says what a benchmark waits for while an earlier one's object goes.
func leftoverMessage(kind string, o client.Object) string {
	return fmt.Sprintf("waiting for the garbage collector to remove %s %s of the earlier benchmark of this name", kind, o.GetName())
}

// notOwnedMessage names an object the benchmark refuses to use, and its owner.
func notOwnedMessage(kind string, o client.Object) string {
	owner := "has no controller"
	if ref := metav1.GetControllerOf(o); ref != nil {
		owner = fmt.Sprintf("is controlled by %s %s", ref.Kind, ref.Name)
	}
	return fmt.Sprintf("%s %s/%s already exists and %s, not by this benchmark: TunnelBench never uses or deletes "+
		"what it does not own; remove or rename that %s, or give the benchmark another name",
		kind, o.GetNamespace(), o.GetName(), owner, kind)
}

// kindOf names an object's kind for messages.
func (r *TunnelBenchmarkReconciler) kindOf(o client.Object) string {
	if gvk := o.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk.Kind
	}
	if gvk, err := apiutil.GVKForObject(o, r.Scheme()); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", o)
}

// emptyLike returns an empty object of o's type (and kind, for unstructured data) to read into.
func emptyLike(o client.Object) client.Object {
	if u, ok := o.(*unstructured.Unstructured); ok {
		out := &unstructured.Unstructured{}
		out.SetGroupVersionKind(u.GroupVersionKind())
		return out
	}
	return reflect.New(reflect.TypeOf(o).Elem()).Interface().(client.Object)
}

// peerCluster is what a transport reads of the cluster while it judges its peers: the benchmark's
// namespace, uncached.
type peerCluster struct {
	r         *TunnelBenchmarkReconciler
	namespace string
}

func (c peerCluster) Get(ctx context.Context, name string, obj client.Object) error {
	return c.r.APIReader.Get(ctx, types.NamespacedName{Namespace: c.namespace, Name: name}, obj)
}

func (c peerCluster) PodTrouble(ctx context.Context, labels map[string]string, what string) transport.Status {
	return c.r.podTrouble(ctx, c.namespace, labels, "", what)
}

func (c peerCluster) Now() time.Time { return c.r.now() }
