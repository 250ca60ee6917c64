package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/specs"
)

// DefaultCertificateWait bounds how long the operator waits for cert-manager to issue a
// Certificate before the benchmark fails.
const DefaultCertificateWait = 5 * time.Minute

// ensureCertificate requests a cert-manager Certificate when missing and reports whether it is
// Ready. problem, when set, is why it never will be: cert-manager is not installed, or the
// issuer did not deliver within the wait (counted from the Certificate's creation).
func (r *TunnelBenchmarkReconciler) ensureCertificate(ctx context.Context, tb *benchv1.TunnelBenchmark,
	desired *unstructured.Unstructured) (ready bool, problem string, err error) {
	notInstalled := fmt.Sprintf("cert-manager is not installed (no Certificate kind), so spec.tls.issuerRef %s/%s "+
		"cannot issue Certificate %s: install cert-manager or remove spec.tls", tb.Spec.TLS.IssuerRef.Kind,
		tb.Spec.TLS.IssuerRef.Name, desired.GetName())
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(specs.CertificateGVK)
	err = r.APIReader.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: desired.GetName()}, existing)
	switch {
	case meta.IsNoMatchError(err):
		return false, notInstalled, nil
	case apierrors.IsNotFound(err):
		if err := r.Create(ctx, desired); err != nil && !apierrors.IsAlreadyExists(err) {
			if meta.IsNoMatchError(err) {
				return false, notInstalled, nil
			}
			return false, "", fmt.Errorf("cannot create Certificate %s: %w", desired.GetName(), err)
		}
		r.event(tb, corev1.EventTypeNormal, "CertificateRequested", "Provision", "Requested Certificate %s from %s %s",
			desired.GetName(), tb.Spec.TLS.IssuerRef.Kind, tb.Spec.TLS.IssuerRef.Name)
		return false, "", nil
	case err != nil:
		return false, "", fmt.Errorf("cannot get Certificate %s: %w", desired.GetName(), err)
	}
	ok, message := specs.CertificateReady(existing)
	if ok {
		return true, "", nil
	}
	wait := orDefault(r.CertificateWait, DefaultCertificateWait)
	if age := r.now().Sub(existing.GetCreationTimestamp().Time); age >= wait {
		return false, fmt.Sprintf("Certificate %s from %s %s is not Ready after %s (%s): check the issuer "+
			"(`kubectl describe certificate %s`)", existing.GetName(), tb.Spec.TLS.IssuerRef.Kind,
			tb.Spec.TLS.IssuerRef.Name, wait, message, existing.GetName()), nil
	}
	return false, "", nil
}
