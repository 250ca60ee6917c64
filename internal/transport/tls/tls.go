// Package tls is the tls transport: TCP with libpq's TLS to the server, optionally presenting a
// client certificate (one the user stored, or one cert-manager issues for the benchmark). It
// registers itself and its rules from init and is linked into the operator by
// internal/transport/transports.
package tls

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

func init() {
	transport.Register(benchv1.TransportTLS, func(c transport.Context) transport.Transport { return tlsTransport{c: c} }, specs.CertificateGVK)
	transport.RegisterRules(benchv1.TransportTLS, transport.Rules{Check: tlsRules})
}

// tlsRules: a TLS transport that verifies an external server needs its CA.
func tlsRules(spec *benchv1.TunnelBenchmarkSpec, i int, path *field.Path) field.ErrorList {
	mode := spec.Transports[i].EffectiveSSLMode()
	if e := spec.Server.External; e == nil || e.CASecret != nil || mode == benchv1.SSLModeRequire {
		return nil
	}
	return field.ErrorList{field.Invalid(path.Child("tls", "sslMode"), mode,
		"sslMode verify-ca and verify-full need spec.server.external.caSecret (the default is verify-full)")}
}

// tlsTransport is TCP with TLS, optionally presenting a client certificate: one the user stored
// (tls.clientCertSecret) or one spec.tls.issuerRef issues for the benchmark (tls.clientCertificate).
type tlsTransport struct {
	transport.Basic
	c transport.Context
}

func (t tlsTransport) settings() benchv1.TLSTransport {
	if t.c.Spec.TLS == nil {
		return benchv1.TLSTransport{}
	}
	return *t.c.Spec.TLS
}

func (t tlsTransport) Peers() ([]transport.Peer, error) {
	cc := t.settings().ClientCertificate
	if cc == nil {
		return nil, nil
	}
	tb := t.c.Benchmark
	cert := specs.ClientCertificate(tb, t.c.Spec.Name, cc.CommonName)
	return []transport.Peer{transport.CertificatePeer(tb, cert, t.c.CertificateWait)}, nil
}

func (tlsTransport) FailureReason() string { return conditions.ReasonCertificateNotReady }

// VerifiesServer: the CA is mounted only for the verifying modes, since with a root certificate
// present libpq's sslmode=require quietly behaves like verify-ca.
func (t tlsTransport) VerifiesServer() bool {
	return t.c.Spec.EffectiveSSLMode() != benchv1.SSLModeRequire
}

func (t tlsTransport) UserSecrets() []transport.SecretRef {
	if ref := t.settings().ClientCertSecret; ref != nil {
		return []transport.SecretRef{{Name: ref.Name, What: fmt.Sprintf("transport %s's client certificate", t.c.Spec.Name),
			Keys: []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey}}}
	}
	return nil
}

func (t tlsTransport) Hop() transport.Hop {
	return transport.ServerHop(t.c.Server, "pgbench → server")
}

func (t tlsTransport) Pod(*runspec.Run) (specs.Pod, error) {
	p := transport.ToServer(t.c.Server, string(t.c.Spec.EffectiveSSLMode()))
	t.c.LibPQVia(&p)
	if t.VerifiesServer() {
		transport.WithServerCA(&p, t.c.Server)
	}
	clientCert := ""
	switch s := t.settings(); {
	case s.ClientCertSecret != nil:
		clientCert = s.ClientCertSecret.Name
	case s.ClientCertificate != nil:
		clientCert = t.c.Benchmark.ClientCertificateName(t.c.Spec.Name)
	}
	if clientCert != "" {
		p.Volumes = append(p.Volumes, specs.SecretVolume("client-cert", clientCert,
			corev1.KeyToPath{Key: corev1.TLSCertKey, Path: "tls.crt"},
			corev1.KeyToPath{Key: corev1.TLSPrivateKeyKey, Path: "tls.key"}))
		p.Mounts = append(p.Mounts, corev1.VolumeMount{Name: "client-cert", MountPath: transport.ClientCertDir, ReadOnly: true})
		p.Env = append(p.Env,
			corev1.EnvVar{Name: "PGSSLCERT", Value: transport.ClientCertDir + "/tls.crt"},
			corev1.EnvVar{Name: "PGSSLKEY", Value: transport.ClientCertDir + "/tls.key"})
	}
	return p, nil
}
