package transport

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// CloudNativePG conventions (cloudnative-pg docs: applications.md, certificates.md).
const (
	CNPGRWSuffix  = "-rw"
	cnpgAppSuffix = "-app"
	cnpgCASuffix  = "-ca"
	usernameKey   = "username"
	passwordKey   = corev1.BasicAuthPasswordKey
	caKey         = "ca.crt"
)

// ServerOf reads spec.server as an endpoint and the Secrets that hold its credentials and CA: the
// one mapping the reconciler (which then checks and creates) and the admission webhook (which asks
// whether the requesting user may read those Secrets) share. It has no side effect.
func ServerOf(tb *benchv1.TunnelBenchmark) (Server, error) {
	switch s := tb.Spec.Server; {
	case s.CNPG != nil:
		return cnpgServer(s.CNPG.ClusterName, string(s.CNPG.Database)), nil
	case s.Managed != nil:
		server := cnpgServer(tb.ManagedClusterName(), benchv1.DefaultDatabase)
		if tb.Spec.TLS != nil {
			server.CASecret = specs.ManagedServerCertificateName(tb)
		}
		return server, nil
	case s.External != nil:
		e := s.External
		server := Server{Engine: s.EffectiveEngine(), Host: e.Host, Port: s.EffectivePort(), Database: string(e.Database),
			CredentialsSecret: e.CredentialsSecret.Name, UsernameKey: usernameKey, PasswordKey: passwordKey}
		if e.CASecret != nil {
			server.CASecret, server.CAKey = e.CASecret.Name, caKey
		}
		return server, nil
	}
	return Server{}, fmt.Errorf("spec.server names no server: set one of cnpg, external or managed")
}

// cnpgServer follows CloudNativePG's naming conventions for a cluster's endpoint and Secrets.
func cnpgServer(cluster, database string) Server {
	if database == "" {
		database = benchv1.DefaultDatabase
	}
	return Server{
		Host: cluster + CNPGRWSuffix, Port: benchv1.DefaultPort, Database: database,
		CredentialsSecret: cluster + cnpgAppSuffix, UsernameKey: usernameKey, PasswordKey: passwordKey,
		CASecret: cluster + cnpgCASuffix, CAKey: caKey,
	}
}

// NamedSecret is a Secret a benchmark makes the operator read, with the spec field that names it.
type NamedSecret struct {
	SecretRef
	// Field is the spec field the user wrote (spec.server.cnpg.clusterName names two Secrets).
	Field *field.Path
}

// UserNamedSecrets are the Secrets of the benchmark's namespace that the operator reads and hands
// to pods because the spec names them: the server's credentials and CA (when a transport verifies
// the server) and each transport's own (a client certificate). A managed server's Secrets are
// made for the benchmark itself and are not among them.
func UserNamedSecrets(tb *benchv1.TunnelBenchmark) ([]NamedSecret, error) {
	endpoint, err := ServerOf(tb)
	if err != nil {
		return nil, err
	}
	var out []NamedSecret
	if tb.Spec.Server.Managed == nil {
		server := field.NewPath("spec", "server")
		credentials, ca := server.Child("external", "credentialsSecret"), server.Child("external", "caSecret")
		if tb.Spec.Server.CNPG != nil {
			credentials = server.Child("cnpg", "clusterName")
			ca = credentials
		}
		out = append(out, NamedSecret{Field: credentials, SecretRef: SecretRef{Name: endpoint.CredentialsSecret,
			What: "the credentials", Keys: []string{endpoint.UsernameKey, endpoint.PasswordKey}}})
		if endpoint.CASecret != "" && VerifiesServer(tb, endpoint) {
			out = append(out, NamedSecret{Field: ca, SecretRef: SecretRef{Name: endpoint.CASecret,
				What: "the server CA", Keys: []string{endpoint.CAKey}}})
		}
	}
	for i, t := range tb.Spec.Transports {
		tr, err := For(Context{Benchmark: tb, Spec: t, Server: endpoint})
		if err != nil {
			return nil, err
		}
		for _, ref := range tr.UserSecrets() {
			out = append(out, NamedSecret{Field: field.NewPath("spec", "transports").Index(i), SecretRef: ref})
		}
	}
	return out, nil
}
