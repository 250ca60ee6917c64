package transport

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// cert-manager Certificates, and the Secrets cert-manager writes for them (removed by name).
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;create;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;delete

// CertificatePeer is a cert-manager Certificate requested from spec.tls.issuerRef, ready once
// cert-manager says so. The wait is bounded by wait from the Certificate's creation: an issuer
// that never delivers fails the benchmark with a message that says where to look.
func CertificatePeer(tb *benchv1.TunnelBenchmark, cert *unstructured.Unstructured, wait time.Duration) Peer {
	ref := tb.Spec.TLS.IssuerRef
	return Peer{
		Object: cert,
		NotInstalled: fmt.Sprintf("cert-manager is not installed (no Certificate kind), so spec.tls.issuerRef %s/%s "+
			"cannot issue Certificate %s: install cert-manager or remove spec.tls", ref.Kind, ref.Name, cert.GetName()),
		Created: func() (string, string) {
			return conditions.ReasonCertificateRequested, fmt.Sprintf("Requested Certificate %s from %s %s", cert.GetName(), ref.Kind, ref.Name)
		},
		Ready: func(_ context.Context, c Cluster, stored client.Object) (Status, error) {
			u, ok := stored.(*unstructured.Unstructured)
			if !ok {
				return Status{}, fmt.Errorf("certificate %s: unexpected type %T", cert.GetName(), stored)
			}
			ok, message := specs.CertificateReady(u)
			switch age := c.Now().Sub(u.GetCreationTimestamp().Time); {
			case ok:
				return Status{Ready: true}, nil
			case age >= wait:
				return Status{Problem: fmt.Sprintf("Certificate %s from %s %s is not Ready after %s (%s): check the issuer "+
					"(`kubectl describe certificate %s`)", u.GetName(), ref.Kind, ref.Name, wait, message, u.GetName())}, nil
			}
			return Status{Waiting: fmt.Sprintf("Certificate %s: %s", u.GetName(), message)}, nil
		},
	}
}
