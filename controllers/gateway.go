package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/specs"
	"github.com/tunnelbench/tunnelbench/internal/sshkeys"
	"github.com/tunnelbench/tunnelbench/internal/sshtunnel"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// ensureGateway creates the benchmark's SSH gateway (key Secret, Service, sshd Deployment) where
// missing, and reports whether it is ready to accept tunnels. Keys are generated once: an existing
// Secret is kept, so a restarted operator never swaps the keys under running tunnels.
func (r *TunnelBenchmarkReconciler) ensureGateway(ctx context.Context, tb *benchv1.TunnelBenchmark,
	server transport.Server) (ready bool, stuck string, err error) {
	gw := specs.GatewayFor(tb)
	material, err := sshkeys.Generate([]string{fmt.Sprintf("%s:%d", gw.Host, sshtunnel.GatewayPort)})
	if err != nil {
		return false, "", err
	}
	// The fingerprint is reported only for keys this pass stored: an existing Secret wins.
	fingerprint := "kept from an earlier pass"
	secret := specs.GatewaySecret(tb, material)
	switch err := r.Create(ctx, secret); {
	case err == nil:
		fingerprint = material.HostFingerprint
	case !apierrors.IsAlreadyExists(err):
		return false, "", fmt.Errorf("cannot create the SSH gateway's key Secret: %w", err)
	}
	if err := r.Create(ctx, specs.GatewayService(tb)); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, "", fmt.Errorf("cannot create the SSH gateway's Service: %w", err)
	}
	dep := &appsv1.Deployment{}
	err = r.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: gw.Name}, dep)
	if apierrors.IsNotFound(err) {
		desired := specs.GatewayDeployment(tb, fmt.Sprintf("%s:%d", server.Host, server.Port), r.Defaults)
		if err := r.Create(ctx, desired); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, "", fmt.Errorf("cannot create the SSH gateway: %w", err)
		}
		r.event(tb, corev1.EventTypeNormal, "GatewayCreated", "Run",
			"Started SSH gateway %s (host key %s)", gw.Name, fingerprint)
		return false, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("cannot get the SSH gateway: %w", err)
	}
	return r.deploymentReady(ctx, tb, dep, "the SSH gateway")
}

// removeLeftoverGateway removes the gateway of an ended benchmark when the cache still shows one.
func (r *TunnelBenchmarkReconciler) removeLeftoverGateway(ctx context.Context, tb *benchv1.TunnelBenchmark) {
	if !tb.HasSSH() {
		return
	}
	dep := &appsv1.Deployment{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: tb.GatewayName()}, dep); err == nil &&
		dep.DeletionTimestamp.IsZero() {
		r.removeGateway(ctx, tb)
	}
}

// removeGateway deletes the SSH gateway once the benchmark has ended: a running sshd holding
// credentials has no business outliving its benchmark. Garbage collection would remove it with
// the benchmark anyway; this only makes it sooner.
func (r *TunnelBenchmarkReconciler) removeGateway(ctx context.Context, tb *benchv1.TunnelBenchmark) {
	if !tb.HasSSH() {
		return
	}
	name := tb.GatewayName()
	meta := func(o client.Object) client.Object { o.SetNamespace(tb.Namespace); o.SetName(name); return o }
	for _, o := range []client.Object{meta(&appsv1.Deployment{}), meta(&corev1.Service{}), meta(&corev1.Secret{})} {
		if err := r.Delete(ctx, o, client.PropagationPolicy("Background")); err != nil && !apierrors.IsNotFound(err) {
			log.FromContext(ctx).Error(err, "Cannot remove the SSH gateway; it goes with the benchmark", "kind", fmt.Sprintf("%T", o))
		}
	}
}
