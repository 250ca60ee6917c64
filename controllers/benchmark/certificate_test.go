package benchmark

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

func issuer() *benchv1.BenchmarkTLS {
	return &benchv1.BenchmarkTLS{IssuerRef: benchv1.IssuerReference{Name: "bench-ca", Kind: "ClusterIssuer"}}
}

func waitForCertificate(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	c := &unstructured.Unstructured{}
	c.SetGroupVersionKind(specs.CertificateGVK)
	eventually(t, 10*time.Second, "Certificate "+name, func() error {
		return testClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, c)
	})
	return c
}

// issue plays cert-manager: it fills the Certificate's Secret and marks the Certificate Ready.
func issue(t *testing.T, c *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	secretName, _, _ := unstructured.NestedString(c.Object, "spec", "secretName")
	// cert-manager puts secretTemplate's labels on the Secret, and no owner reference.
	labels, _, _ := unstructured.NestedStringMap(c.Object, "spec", "secretTemplate", "labels")
	if err := testClient.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.GetNamespace(), Name: secretName, Labels: labels}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("cert"), "tls.key": []byte("key"), "ca.crt": []byte("issuer CA")},
	}); err != nil {
		t.Fatal(err)
	}
	c.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True",
		"reason": "Ready", "message": "Certificate is up to date", "lastTransitionTime": "2026-11-22T00:00:00Z"}}}
	if err := testClient.Status().Update(ctx, c); err != nil {
		t.Fatal(err)
	}
}

// TestCertificatesFromCertManager: with spec.tls.issuerRef the operator requests cert-manager
// Certificates (validated by cert-manager's own CRD) instead of generating certificates, waits for
// them, and uses them: a managed cluster serves the issued certificate and the runner verifies it
// against the issuer's CA; a pooler presents its issued certificate to clients.
func TestCertificatesFromCertManager(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	startOperator(t)
	ctx := context.Background()

	t.Run("managed cluster", func(t *testing.T) {
		tb := newBenchmark(ns, "issued", benchv1.TransportSpec{Name: "tls", Type: benchv1.TransportTLS})
		tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{}}
		tb.Spec.TLS = issuer()
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
		cert := waitForCertificate(t, ns, "issued-pg-tunnelbench-server")
		dns, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
		kind, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "kind")
		if !slices.Contains(dns, "issued-pg-rw."+ns+".svc") || !slices.Contains(dns, "issued-pg-rw") || kind != "ClusterIssuer" {
			t.Errorf("Certificate dnsNames %v, issuer kind %q", dns, kind)
		}
		// No Cluster before the certificate it must serve exists.
		consistently(t, time.Second, "the Cluster waits for the Certificate", func() error {
			if _, err := getCluster(ctx, ns, "issued-pg"); err == nil {
				return errorf("Cluster created before its Certificate was Ready")
			}
			return nil
		})
		issue(t, cert)
		var cluster *unstructured.Unstructured
		eventually(t, 10*time.Second, "the managed Cluster", func() (err error) {
			cluster, err = getCluster(ctx, ns, "issued-pg")
			return err
		})
		for _, field := range []string{"serverTLSSecret", "serverCASecret"} {
			if got, _, _ := unstructured.NestedString(cluster.Object, "spec", "certificates", field); got != "issued-pg-tunnelbench-server" {
				t.Errorf("Cluster certificates.%s = %q", field, got)
			}
		}
		// CloudNativePG writes the Secrets before the cluster is ready.
		createClusterSecrets(t, ns, "issued-pg")
		markClusterReady(t, cluster)
		job := waitForJob(t, ns, jobName(tb.Name, "tls"))
		var caSecret string
		for _, v := range job.Spec.Template.Spec.Volumes {
			if v.Name == "server-ca" {
				caSecret = v.Secret.SecretName
			}
		}
		if caSecret != "issued-pg-tunnelbench-server" {
			t.Errorf("the runner verifies the server against Secret %q, want the issued certificate's CA", caSecret)
		}
		assertEvents(t, ns, "issued", "CertificateRequested", "ClusterCreated")
	})

	t.Run("pooler", func(t *testing.T) {
		createCNPGSecrets(t, ns)
		tb := newBenchmark(ns, "issued-pooler", benchv1.TransportSpec{Name: "pool", Type: benchv1.TransportPooler,
			Pooler: &benchv1.PoolerTransport{Placement: "service", ClientTLS: "require"}})
		useExternalServer(tb)
		tb.Spec.TLS = issuer()
		createExternalSecrets(t, ns)
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
		cert := waitForCertificate(t, ns, tb.PoolerName("pool"))
		dns, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
		if !slices.Contains(dns, tb.PoolerName("pool")+"."+ns+".svc") {
			t.Errorf("pooler Certificate dnsNames %v", dns)
		}
		consistently(t, time.Second, "the pooler waits for its Certificate", func() error {
			if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: tb.PoolerName("pool")}, &appsv1.Deployment{}); err == nil {
				return errorf("pooler started before its Certificate was Ready")
			}
			return nil
		})
		issue(t, cert)
		dep := &appsv1.Deployment{}
		eventually(t, 10*time.Second, "the pooler", func() error {
			return testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: tb.PoolerName("pool")}, dep)
		})
		for _, v := range dep.Spec.Template.Spec.Volumes {
			if v.Name == "pooler-tls" && v.Secret.SecretName != tb.PoolerName("pool") {
				t.Errorf("the pooler presents Secret %q", v.Secret.SecretName)
			}
		}
		if s := getSecretOrNil(t, ns, tb.PoolerName("pool")); s == nil || string(s.Data["ca.crt"]) != "issuer CA" {
			t.Errorf("the pooler's Secret is not the issued one: %v", s)
		}
	})

	t.Run("client certificate", func(t *testing.T) {
		tb := newBenchmark(ns, "cert-auth", benchv1.TransportSpec{Name: "tls", Type: benchv1.TransportTLS,
			TLS: &benchv1.TLSTransport{SSLMode: "verify-full", ClientCertificate: &benchv1.ClientCertificate{CommonName: "app"}}})
		tb.Spec.TLS = issuer()
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
		cert := waitForCertificate(t, ns, tb.ClientCertificateName("tls"))
		cn, _, _ := unstructured.NestedString(cert.Object, "spec", "commonName")
		usages, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "usages")
		if cn != "app" || !slices.Contains(usages, "client auth") || slices.Contains(usages, "server auth") {
			t.Errorf("client Certificate CN %q usages %v", cn, usages)
		}
		assertNoJobYet(t, ns, jobName(tb.Name, "tls"), "the client certificate")
		issue(t, cert)
		job := waitForJob(t, ns, jobName(tb.Name, "tls"))
		var mounted string
		for _, v := range job.Spec.Template.Spec.Volumes {
			if v.Name == "client-cert" {
				mounted = v.Secret.SecretName
			}
		}
		var sslcert string
		for _, e := range job.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "PGSSLCERT" {
				sslcert = e.Value
			}
		}
		if mounted != tb.ClientCertificateName("tls") || sslcert == "" {
			t.Errorf("the runner presents Secret %q (PGSSLCERT %q), want the issued client certificate", mounted, sslcert)
		}
	})
}

// TestCertificateNeverIssued: an issuer that does not deliver fails the benchmark after the bounded
// wait, naming the Certificate and the issuer.
func TestCertificateNeverIssued(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	startOperator(t, func(r *TunnelBenchmarkReconciler) { r.CertificateWait = 3 * time.Second })
	tb := newBenchmark(ns, "undelivered", benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect})
	tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{}}
	tb.Spec.TLS = issuer()
	if err := testClient.Create(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	done := waitForPhase(t, ns, "undelivered", benchv1.PhaseFailed)
	c := meta.FindStatusCondition(done.Status.Conditions, conditions.Failed)
	if c == nil || c.Reason != conditions.ReasonCertificateNotReady || !strings.Contains(c.Message, "not Ready after 3s") ||
		!strings.Contains(c.Message, "ClusterIssuer bench-ca") {
		t.Errorf("Failed condition %+v", c)
	}
}

func getSecretOrNil(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := testClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		return nil
	}
	return s
}
