package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/specs"
)

// checkCluster waits for a CloudNativePG Cluster to be ready. The wait is bounded by ClusterWait:
// a cluster bootstraps (initdb, volumes, images) far slower than a Secret appears.
func (r *TunnelBenchmarkReconciler) checkCluster(ctx context.Context, tb *benchv1.TunnelBenchmark, name string) error {
	wait := orDefault(r.ClusterWait, DefaultClusterWait)
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(specs.CNPGClusterGVK)
	// The uncached reader: a Cluster informer would need the CRD at start and list-watch RBAC.
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: name}, cluster)
	switch {
	case meta.IsNoMatchError(err):
		return &serverError{Reason: benchv1.ReasonClusterNotReady, Wait: wait, Message: fmt.Sprintf(
			"CloudNativePG is not installed (no Cluster kind), so Cluster %s cannot exist: install CloudNativePG "+
				"or use spec.server.external", name)}
	case apierrors.IsNotFound(err):
		return &serverError{Reason: benchv1.ReasonClusterNotReady, Wait: wait, Message: fmt.Sprintf(
			"CloudNativePG Cluster %s/%s not found: create it or fix spec.server.cnpg.clusterName", tb.Namespace, name)}
	case err != nil:
		return fmt.Errorf("cannot get CloudNativePG Cluster %s: %w", name, err)
	}
	if ready, state := specs.ClusterReady(cluster); !ready {
		return &serverError{Reason: benchv1.ReasonClusterNotReady, Wait: wait, Message: fmt.Sprintf(
			"CloudNativePG Cluster %s/%s is not ready (%s): see `kubectl describe cluster %s` and its pods",
			tb.Namespace, name, state, name)}
	}
	return nil
}

// ensureManagedCluster creates the benchmark's own CloudNativePG Cluster when missing.
func (r *TunnelBenchmarkReconciler) ensureManagedCluster(ctx context.Context, tb *benchv1.TunnelBenchmark) error {
	err := r.Create(ctx, specs.ManagedCluster(tb, r.PostgresImage))
	switch {
	case err == nil:
		r.event(tb, corev1.EventTypeNormal, "ClusterCreated", "Provision",
			"Created CloudNativePG Cluster %s", tb.ManagedClusterName())
	case meta.IsNoMatchError(err):
		return &serverError{Reason: benchv1.ReasonClusterNotReady, Wait: orDefault(r.ClusterWait, DefaultClusterWait),
			Message: "CloudNativePG is not installed (no Cluster kind): install it to use spec.server.managed"}
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("cannot create the CloudNativePG Cluster: %w", err)
	}
	return nil
}

// removeLeftoverManagedCluster deletes the Cluster of an ended benchmark that is still there: one
// re-created by a pass that worked from a stale cache, or whose deletion failed.
func (r *TunnelBenchmarkReconciler) removeLeftoverManagedCluster(ctx context.Context, tb *benchv1.TunnelBenchmark) {
	if m := tb.Spec.Server.Managed; m == nil || m.Retain {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(specs.CNPGClusterGVK)
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: tb.ManagedClusterName()}, u)
	if err == nil && u.GetDeletionTimestamp().IsZero() {
		r.removeManagedCluster(ctx, tb)
	}
}

// removeManagedCluster deletes the benchmark's own Cluster once it has ended, unless retained.
func (r *TunnelBenchmarkReconciler) removeManagedCluster(ctx context.Context, tb *benchv1.TunnelBenchmark) {
	m := tb.Spec.Server.Managed
	if m == nil || m.Retain {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(specs.CNPGClusterGVK)
	u.SetNamespace(tb.Namespace)
	u.SetName(tb.ManagedClusterName())
	err := r.Delete(ctx, u, client.PropagationPolicy("Background"))
	if err == nil {
		r.event(tb, corev1.EventTypeNormal, "ClusterDeleted", "Cleanup", "Deleted CloudNativePG Cluster %s", u.GetName())
		return
	}
	if !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		log.FromContext(ctx).Error(err, "Cannot delete the managed Cluster; it goes with the benchmark")
	}
}
