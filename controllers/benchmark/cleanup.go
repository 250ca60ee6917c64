package benchmark

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/chaosmesh"
)

// runnerAccessKinds are the kinds of specs.RunnerAccess: removed once the benchmark has ended, so
// that no credential to write its results outlives it.
var runnerAccessKinds = []schema.GroupVersionKind{
	corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
	rbacv1.SchemeGroupVersion.WithKind("Role"),
	rbacv1.SchemeGroupVersion.WithKind("RoleBinding"),
}

// ownedKinds are the kinds of what the operator makes next to the server for a benchmark (besides
// its Jobs, which stay with their results until the benchmark is deleted): every transport's
// peers, a managed server's Cluster and certificate, and the runs' chaos-mesh links.
func ownedKinds() []schema.GroupVersionKind {
	kinds := transport.PeerKinds()
	for _, k := range append([]schema.GroupVersionKind{specs.CNPGClusterGVK, specs.CertificateGVK, chaosmesh.NetworkChaosGVK},
		runnerAccessKinds...) {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// removeOwned deletes what the operator made for the benchmark: everything once it has ended, or
// what served one transport (transportName set) once that run is over. Objects are found by the
// benchmark's labels (as CloudNativePG finds its managed resources), deleted only when this
// benchmark controls them, and each delete is conditioned on the UID that was found, so that an
// object re-created under the same name by someone else in between is never touched. Secrets are
// not listed (the operator may only get them by name): the ones it made share the name of another
// object it made (the gateway's, a pooler's, a Certificate's); cert-manager's, which carry no owner reference, are removed
// when they carry this benchmark's UID label. A managed server kept by `retain` stays, with its
// certificate. Garbage collection would remove the owned objects with the benchmark anyway; this
// only makes it sooner, so that nothing holding connections or credentials outlives its use.
func (r *TunnelBenchmarkReconciler) removeOwned(ctx context.Context, tb *benchv1.TunnelBenchmark, transportName string) {
	logger := log.FromContext(ctx)
	selector := client.MatchingLabels{benchv1.LabelBenchmark: tb.Name}
	if transportName != "" {
		selector[benchv1.LabelTransport] = transportName
	}
	keepServer := tb.Spec.Server.Managed != nil && tb.Spec.Server.Managed.Retain
	var secretNames []string
	for _, gvk := range ownedKinds() {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.APIReader.List(ctx, list, client.InNamespace(tb.Namespace), selector); err != nil {
			if !meta.IsNoMatchError(err) {
				logger.Error(err, "Cannot list what the benchmark owns; it goes with the benchmark", "kind", gvk.Kind)
			}
			continue
		}
		for i := range list.Items {
			o := &list.Items[i]
			if !metav1.IsControlledBy(o, tb) || !o.DeletionTimestamp.IsZero() ||
				(keepServer && o.Labels[benchv1.LabelComponent] == specs.ServerComponent) {
				continue
			}
			o.SetGroupVersionKind(gvk)
			if gvk == chaosmesh.NetworkChaosGVK {
				r.removeNetworkChaos(ctx, o)
				continue
			}
			if !slices.Contains(secretNames, o.Name) {
				secretNames = append(secretNames, o.Name)
			}
			if r.deleteFound(ctx, o) && gvk == specs.CNPGClusterGVK {
				r.event(tb, corev1.EventTypeNormal, conditions.ReasonClusterDeleted, "Cleanup", "Deleted CloudNativePG Cluster %s", o.Name)
			}
		}
	}
	for _, name := range secretNames {
		secret := &metav1.PartialObjectMetadata{}
		secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: name}, secret)
		if err != nil {
			if !apierrors.IsNotFound(err) {
				logger.Error(err, "Cannot get a Secret the benchmark made", "secret", name)
			}
			continue
		}
		if metav1.IsControlledBy(secret, tb) || secret.Labels[benchv1.LabelBenchmarkUID] == string(tb.UID) {
			r.deleteFound(ctx, secret)
		}
	}
}

// deleteFound deletes an object found by a read, only if it is still that object (same UID).
func (r *TunnelBenchmarkReconciler) deleteFound(ctx context.Context, o *metav1.PartialObjectMetadata) bool {
	uid := o.UID
	err := r.Delete(ctx, o, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		log.FromContext(ctx).Error(err, "Cannot remove what the benchmark made; it goes with the benchmark",
			"kind", o.Kind, "name", o.Name)
		return false
	}
	return err == nil
}
