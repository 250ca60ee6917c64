package specs

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// CertificateGVK is cert-manager's Certificate kind, handled as unstructured data: cert-manager's
// Go module is not needed, and its CRDs only when a benchmark asks for an issuer.
var CertificateGVK = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}

// CNPGPoolerGVK is CloudNativePG's Pooler kind, handled as unstructured data too: the operator
// needs neither CloudNativePG's Go module nor its CRDs unless a benchmark uses them.
var CNPGPoolerGVK = schema.GroupVersionKind{Group: "postgresql.cnpg.io", Version: "v1", Kind: "Pooler"}

// Certificate is a server certificate for hosts, requested from the benchmark's issuer, stored by
// cert-manager in a Secret of the same name (tls.crt, tls.key and, from CA issuers, ca.crt).
// transport, when set, is the transport it serves alone.
func Certificate(tb *benchv1.TunnelBenchmark, name, component, transport string, hosts []string) *unstructured.Unstructured {
	return certificate(tb, name, component, transport, hosts[0], hosts, "server auth")
}

// ClientCertificate is a client certificate whose CN is a database user, from the benchmark's
// issuer, for a TLS transport's certificate authentication.
func ClientCertificate(tb *benchv1.TunnelBenchmark, transport, commonName string) *unstructured.Unstructured {
	return certificate(tb, tb.ClientCertificateName(transport), RunnerComponent, transport, commonName, nil, "client auth")
}

func certificate(tb *benchv1.TunnelBenchmark, name, component, transport, commonName string, hosts []string,
	usage string) *unstructured.Unstructured {
	ref := tb.Spec.TLS.IssuerRef
	kind, group := ref.Kind, ref.Group
	if kind == "" {
		kind = benchv1.DefaultIssuerKind
	}
	if group == "" {
		group = benchv1.DefaultIssuerGroup
	}
	dnsNames := make([]any, 0, len(hosts))
	for _, h := range hosts {
		dnsNames = append(dnsNames, h)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"secretName": name,
		"commonName": commonName,
		"usages":     []any{usage, "digital signature", "key encipherment"},
		"privateKey": map[string]any{"algorithm": "ECDSA", "size": int64(256), "rotationPolicy": "Always"},
		"issuerRef":  map[string]any{"name": ref.Name, "kind": kind, "group": group},
		// cert-manager's Secret has no owner reference (unless cert-manager runs with
		// --enable-certificate-owner-ref): the operator removes it by this benchmark's UID.
		"secretTemplate": map[string]any{"labels": map[string]any{
			benchv1.LabelBenchmark: tb.Name, benchv1.LabelBenchmarkUID: string(tb.UID)}},
	}}}
	if len(dnsNames) > 0 {
		u.Object["spec"].(map[string]any)["dnsNames"] = dnsNames
	}
	u.SetGroupVersionKind(CertificateGVK)
	SetMeta(u, OwnedMeta(tb, name, component, transport))
	return u
}

// ManagedServerCertificateName is the Certificate (and Secret) of a managed cluster's server.
func ManagedServerCertificateName(tb *benchv1.TunnelBenchmark) string {
	return benchv1.BoundedName(tb.ManagedClusterName() + "-tunnelbench-server")
}

// ManagedServerCertificate is the server certificate of a managed cluster: each of
// CloudNativePG's Services (rw, r, ro), short and qualified.
func ManagedServerCertificate(tb *benchv1.TunnelBenchmark) *unstructured.Unstructured {
	var hosts []string
	for _, suffix := range []string{"-rw", "-r", "-ro"} {
		svc := tb.ManagedClusterName() + suffix
		hosts = append(hosts, svc, fmt.Sprintf("%s.%s", svc, tb.Namespace), fmt.Sprintf("%s.%s.svc", svc, tb.Namespace),
			fmt.Sprintf("%s.%s.svc.cluster.local", svc, tb.Namespace))
	}
	return Certificate(tb, ManagedServerCertificateName(tb), ServerComponent, "", hosts)
}

// CertificateReady reads a Certificate's Ready condition and, when not ready, its message.
func CertificateReady(c *unstructured.Unstructured) (bool, string) {
	conditions, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
	for _, raw := range conditions {
		cond, ok := raw.(map[string]any)
		if !ok || cond["type"] != "Ready" {
			continue
		}
		msg, _ := cond["message"].(string)
		return cond["status"] == "True", msg
	}
	return false, "no Ready condition yet"
}
