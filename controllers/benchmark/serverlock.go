package benchmark

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// A benchmark that measures a server holds that server's Lease (coordination.k8s.io) in the
// operator's namespace from the moment it leaves the queue until it ends. Creating a Lease is
// atomic in the API server, so of two benchmarks of one server that leave the queue in the same
// second, whatever the order of their names and whichever operator pass sees them, exactly one
// starts; and the lock outlives an operator restart. The Lease is named after the server's
// identity (serverIdentity), not after how a spec spells its host. The Leases are the operator's
// own: a Role in its namespace grants them (config/rbac/server_locks_role.yaml), not its
// ClusterRole.
//
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list

// Annotations on a server Lease: who holds it, for people and for the operator's messages.
const (
	annotationLockHolder = "bench.tunnelbench.io/holder"
	annotationLockServer = "bench.tunnelbench.io/server"
	labelLockHolderUID   = "bench.tunnelbench.io/holder-uid"
)

// serverLockName is the Lease of a server identity: a DNS label whatever the identity.
func serverLockName(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return "tunnelbench-server-" + hex.EncodeToString(sum[:])[:20]
}

// serverIdentity names the server a benchmark connects to as the cluster routes it: a host that is a
// Service of the cluster (the CloudNativePG cluster's -rw Service, "pg", "pg.ns.svc") is its
// cluster IP, and so is that IP written as the host when the Service is in the benchmark's own
// namespace; any other IP literal is itself within the benchmark's namespace only, and any other
// name as serverKey spells it. The port completes it. An IP is no name the webhook can check: a
// benchmark that writes another namespace's cluster IP must not take that server's place in its
// queue (naming the Service needs the right to benchmark there).
func (r *TunnelBenchmarkReconciler) serverIdentity(ctx context.Context, tb *benchv1.TunnelBenchmark) string {
	key := serverKey(tb)
	host, port, err := net.SplitHostPort(key)
	if err != nil {
		return key
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		if r.isOwnClusterIP(ctx, tb.Namespace, ip) {
			return net.JoinHostPort(ip.String(), port)
		}
		return "ip in " + tb.Namespace + ": " + net.JoinHostPort(ip.String(), port)
	}
	// serverKey spells an in-cluster name "name.namespace.svc".
	parts := strings.Split(host, ".")
	if len(parts) != 3 || parts[2] != "svc" {
		return key
	}
	svc := &corev1.Service{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: parts[1], Name: parts[0]}, svc); err != nil {
		return key
	}
	if ip := net.ParseIP(svc.Spec.ClusterIP); ip != nil {
		return net.JoinHostPort(ip.String(), port)
	}
	return key // headless: its pods' addresses change; its name is what stays
}

// isOwnClusterIP says whether ip is the cluster IP of a Service of namespace ns; an error reading
// them says no (the identity is then the benchmark's namespace's own).
func (r *TunnelBenchmarkReconciler) isOwnClusterIP(ctx context.Context, ns string, ip net.IP) bool {
	services := &corev1.ServiceList{}
	if err := r.APIReader.List(ctx, services, client.InNamespace(ns)); err != nil {
		return false
	}
	for _, svc := range services.Items {
		for _, own := range svc.Spec.ClusterIPs {
			if parsed := net.ParseIP(own); parsed != nil && parsed.Equal(ip) {
				return true
			}
		}
	}
	return false
}

// lockDecision is what lockServer does with what it observed.
type lockDecision int

const (
	lockTake        lockDecision = iota // no Lease: create it
	lockTakeOver                        // a Lease whose holder is gone, or ended long ago: update it
	lockHeld                            // this benchmark holds it already
	lockWait                            // another running benchmark holds it
	lockWaitRelease                     // its holder ended just now: its own pass releases it once its pods stopped
)

// decideLock is the pure part of lockServer: lease is nil when none exists; holder is the benchmark
// the Lease names, nil when it does not exist any more. A holder that ended keeps its Lease until
// its own pass releases it, once its runner pods stopped (unlockServer), for at most
// maxReleaseWait: the last pgbench of a stopped Job may still load the server. Past that bound,
// or when it ended with no time recorded, the Lease is left behind (the operator stopped in
// between) and taken over.
func decideLock(tb *benchv1.TunnelBenchmark, lease *coordinationv1.Lease, holder *benchv1.TunnelBenchmark, now time.Time) lockDecision {
	switch {
	case lease == nil:
		return lockTake
	case ptr.Deref(lease.Spec.HolderIdentity, "") == string(tb.UID):
		return lockHeld
	case holder == nil || string(holder.UID) != ptr.Deref(lease.Spec.HolderIdentity, "") || !holder.DeletionTimestamp.IsZero():
		return lockTakeOver
	case holder.Status.Phase.IsTerminal():
		if ended := holder.Status.CompletionTime; ended != nil && now.Sub(ended.Time) < maxReleaseWait {
			return lockWaitRelease
		}
		return lockTakeOver
	default:
		return lockWait
	}
}

// lockServer takes tb's server Lease. It returns "" once tb holds it, else a message naming the
// benchmark that does.
func (r *TunnelBenchmarkReconciler) lockServer(ctx context.Context, tb *benchv1.TunnelBenchmark) (string, error) {
	if r.LockNamespace == "" || !tb.IsExclusive() {
		return "", nil
	}
	identity := r.serverIdentity(ctx, tb)
	name := serverLockName(identity)
	lease := &coordinationv1.Lease{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: r.LockNamespace, Name: name}, lease)
	if apierrors.IsNotFound(err) {
		lease = nil
	} else if err != nil {
		return "", fmt.Errorf("cannot read the server's Lease %s: %w", name, err)
	}
	var holder *benchv1.TunnelBenchmark
	if lease != nil {
		holder = r.lockHolder(ctx, lease)
	}
	switch decideLock(tb, lease, holder, r.now()) {
	case lockHeld:
		return "", nil
	case lockWait:
		return fmt.Sprintf("benchmark %s/%s (%s) measures the same server (%s); this one starts when it ends",
			holder.Namespace, holder.Name, holder.Status.Phase, identity), nil
	case lockWaitRelease:
		return fmt.Sprintf("benchmark %s/%s (%s) measured the same server (%s) and its runner pods are stopping; "+
			"this one starts once they have", holder.Namespace, holder.Name, holder.Status.Phase, identity), nil
	case lockTake:
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: r.LockNamespace, Name: name}}
		setLockHolder(lease, tb, identity)
		err = r.Create(ctx, lease)
	default:
		setLockHolder(lease, tb, identity)
		err = r.Update(ctx, lease) // optimistic: of two takers, one gets a conflict
	}
	if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
		return fmt.Sprintf("another benchmark took the server's Lease %s first (%s)", name, identity), nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot take the server's Lease %s: %w", name, err)
	}
	return "", nil
}

func setLockHolder(lease *coordinationv1.Lease, tb *benchv1.TunnelBenchmark, identity string) {
	lease.Spec.HolderIdentity = ptr.To(string(tb.UID))
	lease.Spec.AcquireTime = &metav1.MicroTime{Time: metav1.Now().Time}
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[annotationLockHolder] = tb.Namespace + "/" + tb.Name
	lease.Annotations[annotationLockServer] = identity
	if lease.Labels == nil {
		lease.Labels = map[string]string{}
	}
	lease.Labels[labelLockHolderUID] = string(tb.UID)
}

// lockHolder is the benchmark a Lease names, nil when it is gone.
func (r *TunnelBenchmarkReconciler) lockHolder(ctx context.Context, lease *coordinationv1.Lease) *benchv1.TunnelBenchmark {
	ns, name, ok := strings.Cut(lease.Annotations[annotationLockHolder], "/")
	if !ok {
		return nil
	}
	holder := &benchv1.TunnelBenchmark{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, holder); err != nil {
		return nil
	}
	return holder
}

// maxReleaseWait bounds how long an ended benchmark keeps its server after its Jobs were deleted,
// waiting for their pods to stop (the runner stops pgbench on SIGTERM, within the pod's grace
// period): a pod on a lost node never reports that it stopped.
const maxReleaseWait = 2 * time.Minute

// unlockServer releases the server Lease an ended tb holds, found by the holder's label (the
// server's identity may have changed since: a managed cluster's Service is gone), once none of its
// runner pods runs any more: the next benchmark of the server must not measure it while the last
// pgbench still loads it. It reports whether tb holds no Lease any more. A Lease left behind (the
// operator stopped in between) is taken over by the next benchmark, since its holder ended.
func (r *TunnelBenchmarkReconciler) unlockServer(ctx context.Context, tb *benchv1.TunnelBenchmark) bool {
	if r.LockNamespace == "" || !tb.IsExclusive() {
		return true
	}
	leases := &coordinationv1.LeaseList{}
	if err := r.APIReader.List(ctx, leases, client.InNamespace(r.LockNamespace),
		client.MatchingLabels{labelLockHolderUID: string(tb.UID)}); err != nil || len(leases.Items) == 0 {
		return err == nil
	}
	ended := tb.Status.CompletionTime
	if tb.DeletionTimestamp.IsZero() && (ended == nil || r.now().Sub(ended.Time) < maxReleaseWait) && r.runnerPodsRun(ctx, tb) {
		return false
	}
	released := false
	for i := range leases.Items {
		lease := &leases.Items[i]
		if ptr.Deref(lease.Spec.HolderIdentity, "") != string(tb.UID) {
			continue
		}
		// Preconditioned on what was read: a Lease taken over in between is not deleted.
		if r.Delete(ctx, lease, &client.DeleteOptions{Preconditions: &metav1.Preconditions{
			UID: &lease.UID, ResourceVersion: &lease.ResourceVersion}}) == nil {
			released = true
		}
	}
	if released {
		// The server is free: the benchmark next in its line need not wait for its poll.
		r.wakeQueued(tb)
	}
	return true
}

// runnerPodsRun reports whether a pod of the benchmark's Jobs has not stopped yet.
func (r *TunnelBenchmarkReconciler) runnerPodsRun(ctx context.Context, tb *benchv1.TunnelBenchmark) bool {
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(tb.Namespace),
		client.MatchingLabels{benchv1.LabelBenchmark: tb.Name}); err != nil {
		return true
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.Spec.NodeName != "" {
			return true
		}
	}
	return false
}
