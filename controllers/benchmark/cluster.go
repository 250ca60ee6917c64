package benchmark

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
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
		return &serverError{Reason: conditions.ReasonClusterNotReady, Wait: wait, Message: fmt.Sprintf(
			"CloudNativePG is not installed (no Cluster kind), so Cluster %s cannot exist: install CloudNativePG "+
				"or use spec.server.external", name)}
	case apierrors.IsNotFound(err):
		return &serverError{Reason: conditions.ReasonClusterNotReady, Wait: wait, Message: fmt.Sprintf(
			"CloudNativePG Cluster %s/%s not found: create it or fix spec.server.cnpg.clusterName", tb.Namespace, name)}
	case err != nil:
		return fmt.Errorf("cannot get CloudNativePG Cluster %s: %w", name, err)
	}
	if ready, state := specs.ClusterReady(cluster); !ready {
		return &serverError{Reason: conditions.ReasonClusterNotReady, Wait: wait, Message: fmt.Sprintf(
			"CloudNativePG Cluster %s/%s is not ready (%s): see `kubectl describe cluster %s` and its pods",
			tb.Namespace, name, state, name)}
	}
	return nil
}
