package controllers

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/pki"
	"github.com/tunnelbench/tunnelbench/internal/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// poolerCertValidity bounds the pooler's generated certificate: it serves one benchmark.
const poolerCertValidity = 7 * 24 * time.Hour

// ensurePooler creates a pooler transport's shared pooler where missing and reports whether it
// accepts connections. A sidecar pooler needs nothing here: it starts with the runner pod.
func (r *TunnelBenchmarkReconciler) ensurePooler(ctx context.Context, tb *benchv1.TunnelBenchmark,
	server transport.Server, t benchv1.TransportSpec) (ready bool, stuck string, err error) {
	if t.EffectivePooler().Placement == benchv1.PoolerSidecar {
		return true, "", nil
	}
	ep := specs.PoolerFor(tb, t)
	if ep.CNPG {
		return r.ensureCNPGPooler(ctx, tb, t, ep)
	}
	if t.EffectivePooler().ClientTLS == "require" {
		if tb.Spec.TLS != nil {
			// The issuer's certificate, in a Secret of the pooler's name, replaces the generated one.
			cert := specs.Certificate(tb, ep.Name, specs.PoolerComponent, transport.PoolerHosts(ep, tb.Namespace))
			if ready, problem, err := r.ensureCertificate(ctx, tb, cert); err != nil || problem != "" || !ready {
				return false, problem, err
			}
		} else if err := r.ensurePoolerCertificate(ctx, tb, t, ep); err != nil {
			return false, "", err
		}
	}
	if err := r.Create(ctx, specs.PoolerService(tb, t)); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, "", fmt.Errorf("cannot create the pooler's Service: %w", err)
	}
	dep := &appsv1.Deployment{}
	err = r.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: ep.Name}, dep)
	if apierrors.IsNotFound(err) {
		desired := specs.PoolerDeployment(tb, t, transport.ServicePgBouncer(server, t, ep.Name), r.Defaults)
		if err := r.Create(ctx, desired); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, "", fmt.Errorf("cannot create the pooler: %w", err)
		}
		r.event(tb, corev1.EventTypeNormal, "PoolerCreated", "Run", "Started PgBouncer %s for transport %s", ep.Name, t.Name)
		return false, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("cannot get the pooler: %w", err)
	}
	return r.deploymentReady(ctx, tb, dep, "the pooler")
}

// ensurePoolerCertificate stores the certificate the pooler presents to clients, made once.
func (r *TunnelBenchmarkReconciler) ensurePoolerCertificate(ctx context.Context, tb *benchv1.TunnelBenchmark,
	t benchv1.TransportSpec, ep transport.PoolerEndpoint) error {
	existing := &corev1.Secret{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: ep.Name}, existing)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("cannot get the pooler's TLS Secret: %w", err)
	}
	ca, err := pki.NewCA(ep.Name+" CA", poolerCertValidity)
	if err != nil {
		return err
	}
	cert, err := ca.Issue(ep.Name, transport.PoolerHosts(ep, tb.Namespace), poolerCertValidity)
	if err != nil {
		return err
	}
	if err := r.Create(ctx, specs.PoolerTLSSecret(tb, t, ca, cert)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot create the pooler's TLS Secret: %w", err)
	}
	return nil
}

// ensureCNPGPooler creates a CloudNativePG Pooler and waits for the Deployment CloudNativePG makes
// for it (named like the Pooler).
func (r *TunnelBenchmarkReconciler) ensureCNPGPooler(ctx context.Context, tb *benchv1.TunnelBenchmark,
	t benchv1.TransportSpec, ep transport.PoolerEndpoint) (bool, string, error) {
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(specs.CNPGPoolerGVK)
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: ep.Name}, existing)
	switch {
	case meta.IsNoMatchError(err):
		return false, "CloudNativePG's Pooler kind is not installed in this cluster: install CloudNativePG, " +
			"or use pooler.placement sidecar", nil
	case apierrors.IsNotFound(err):
		if err := r.Create(ctx, specs.CNPGPoolerMetricsService(tb, t)); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, "", fmt.Errorf("cannot create the Service of the CloudNativePG Pooler's exporters: %w", err)
		}
		if err := r.Create(ctx, specs.CNPGPooler(tb, t)); err != nil && !apierrors.IsAlreadyExists(err) {
			if meta.IsNoMatchError(err) {
				return false, "CloudNativePG's Pooler kind is not installed in this cluster", nil
			}
			return false, "", fmt.Errorf("cannot create the CloudNativePG Pooler: %w", err)
		}
		r.event(tb, corev1.EventTypeNormal, "PoolerCreated", "Run", "Created CloudNativePG Pooler %s for transport %s",
			ep.Name, t.Name)
		return false, "", nil
	case err != nil:
		return false, "", fmt.Errorf("cannot get the CloudNativePG Pooler: %w", err)
	}
	dep := &appsv1.Deployment{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: ep.Name}, dep); err != nil {
		if apierrors.IsNotFound(err) {
			return false, "", nil
		}
		return false, "", fmt.Errorf("cannot get the CloudNativePG Pooler's Deployment: %w", err)
	}
	return dep.Status.AvailableReplicas >= 1, "", nil
}

// deploymentReady reports whether one of the operator's Deployments is available, or describes
// its pod that cannot start.
func (r *TunnelBenchmarkReconciler) deploymentReady(ctx context.Context, tb *benchv1.TunnelBenchmark,
	dep *appsv1.Deployment, what string) (bool, string, error) {
	if dep.Status.AvailableReplicas >= 1 {
		return true, "", nil
	}
	return false, r.stuckPods(ctx, tb.Namespace, dep.Spec.Selector.MatchLabels, "", what), nil
}

// removePoolers deletes the shared poolers of the given transports (all when none is named): a
// pooler holding server connections must not weigh on the transports measured after it, nor
// outlive its benchmark. Garbage collection would remove them with the benchmark anyway.
func (r *TunnelBenchmarkReconciler) removePoolers(ctx context.Context, tb *benchv1.TunnelBenchmark, only ...string) {
	for _, t := range tb.Spec.Transports {
		if t.Type != benchv1.TransportPooler || t.EffectivePooler().Placement != benchv1.PoolerService ||
			(len(only) > 0 && t.Name != only[0]) {
			continue
		}
		ep := specs.PoolerFor(tb, t)
		named := func(o client.Object) client.Object { o.SetNamespace(tb.Namespace); o.SetName(ep.Name); return o }
		objects := []client.Object{named(&appsv1.Deployment{}), named(&corev1.Service{}), named(&corev1.Secret{})}
		if ep.CNPG {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(specs.CNPGPoolerGVK)
			metrics := &corev1.Service{}
			metrics.SetNamespace(tb.Namespace)
			metrics.SetName(specs.CNPGPoolerMetricsServiceName(ep.Name))
			objects = []client.Object{named(u), metrics}
		}
		for _, o := range objects {
			err := r.Delete(ctx, o, client.PropagationPolicy("Background"))
			if err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
				log.FromContext(ctx).Error(err, "Cannot remove the pooler; it goes with the benchmark", "name", ep.Name)
			}
		}
	}
}

// removeLeftoverPoolers removes the poolers of an ended benchmark that a pass working from a stale
// cache may have started again.
func (r *TunnelBenchmarkReconciler) removeLeftoverPoolers(ctx context.Context, tb *benchv1.TunnelBenchmark) {
	for _, t := range tb.Spec.Transports {
		if t.Type != benchv1.TransportPooler || t.EffectivePooler().Placement != benchv1.PoolerService {
			continue
		}
		ep := specs.PoolerFor(tb, t)
		var o client.Object = &appsv1.Deployment{}
		if ep.CNPG {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(specs.CNPGPoolerGVK)
			o = u
		}
		// The uncached reader: CloudNativePG Poolers must not start an informer.
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: ep.Name}, o); err == nil &&
			o.GetDeletionTimestamp().IsZero() {
			r.removePoolers(ctx, tb, t.Name)
		}
	}
}
