package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// CloudNativePG conventions (cloudnative-pg docs: applications.md, certificates.md).
const (
	cnpgPort            = 5432
	cnpgDefaultDatabase = "app"
	cnpgRWSuffix        = "-rw"
	cnpgAppSuffix       = "-app"
	cnpgCASuffix        = "-ca"
	usernameKey         = "username"
	passwordKey         = corev1.BasicAuthPasswordKey
	caKey               = "ca.crt"
)

// serverError is a server that does not resolve yet; the user (or CloudNativePG, still
// bootstrapping) can fix it, so the controller waits a bounded time before failing: Wait, or the
// reconciler's ServerWait when zero.
type serverError struct {
	Reason  string
	Message string
	Wait    time.Duration
	// Fatal errors fail the benchmark at once: waiting cannot fix them.
	Fatal bool
}

func (e *serverError) Error() string { return e.Message }

// resolveServer turns spec.server into an endpoint and checks that the Secrets it references exist
// with the keys the runner will read. Secrets are read with the uncached reader: the operator
// needs `get` on them, never `list` or `watch`, and keeps no copy.
func (r *TunnelBenchmarkReconciler) resolveServer(ctx context.Context, tb *benchv1.TunnelBenchmark) (transport.Server, error) {
	var s transport.Server
	switch {
	case tb.Spec.Server.CNPG != nil:
		s = cnpgServer(tb.Spec.Server.CNPG.ClusterName, tb.Spec.Server.CNPG.Database)
		if err := r.checkCluster(ctx, tb, tb.Spec.Server.CNPG.ClusterName); err != nil {
			return s, err
		}
	case tb.Spec.Server.Managed != nil:
		name := tb.ManagedClusterName()
		s = cnpgServer(name, specs.ManagedDatabase)
		// Created once: a pass that reads the benchmark from a stale cache after it ended must
		// not bring the deleted Cluster back.
		if tb.Spec.TLS != nil {
			s.CASecret = specs.ManagedServerCertificateName(tb)
		}
		if tb.Status.ManagedCluster == "" {
			if err := r.ensureServerCertificate(ctx, tb); err != nil {
				return s, err
			}
			if err := r.ensureManagedCluster(ctx, tb); err != nil {
				return s, err
			}
			tb.Status.ManagedCluster = name
		}
		if err := r.checkCluster(ctx, tb, name); err != nil {
			return s, err
		}
	case tb.Spec.Server.External != nil:
		e := tb.Spec.Server.External
		s = transport.Server{
			Host: e.Host, Port: e.Port, Database: e.Database,
			CredentialsSecret: e.CredentialsSecret.Name, UsernameKey: usernameKey, PasswordKey: passwordKey,
		}
		if s.Port == 0 {
			s.Port = cnpgPort
		}
		if e.CASecret != nil {
			s.CASecret, s.CAKey = e.CASecret.Name, caKey
		}
	default:
		return s, &serverError{Reason: benchv1.ReasonInvalidSecret, Message: "spec.server names no server"}
	}

	if err := r.checkSecret(ctx, tb.Namespace, s.CredentialsSecret, "the credentials", s.UsernameKey, s.PasswordKey); err != nil {
		return s, err
	}
	if s.CASecret != "" && needsCA(tb) {
		if err := r.checkSecret(ctx, tb.Namespace, s.CASecret, "the server CA", s.CAKey); err != nil {
			return s, err
		}
	}
	for _, t := range tb.Spec.Transports {
		if t.TLS != nil && t.TLS.ClientCertSecret != nil {
			what := fmt.Sprintf("transport %s's client certificate", t.Name)
			if err := r.checkSecret(ctx, tb.Namespace, t.TLS.ClientCertSecret.Name, what,
				corev1.TLSCertKey, corev1.TLSPrivateKeyKey); err != nil {
				return s, err
			}
		}
	}
	return s, nil
}

// ensureServerCertificate has the issuer of spec.tls issue a managed cluster's server certificate
// before the Cluster is created with it.
func (r *TunnelBenchmarkReconciler) ensureServerCertificate(ctx context.Context, tb *benchv1.TunnelBenchmark) error {
	if tb.Spec.TLS == nil {
		return nil
	}
	cert := specs.Certificate(tb, specs.ManagedServerCertificateName(tb), "server", specs.ManagedServerHosts(tb))
	ready, problem, err := r.ensureCertificate(ctx, tb, cert)
	switch {
	case err != nil:
		return err
	case problem != "":
		return &serverError{Reason: benchv1.ReasonCertificateNotReady, Message: problem, Fatal: true}
	case !ready:
		// ensureCertificate bounds the wait from the Certificate's creation; this bound only
		// backs it up.
		return &serverError{Reason: benchv1.ReasonCertificateNotReady, Wait: 2 * orDefault(r.CertificateWait, DefaultCertificateWait),
			Message: fmt.Sprintf("waiting for cert-manager to issue Certificate %s", cert.GetName())}
	}
	return nil
}

// cnpgServer follows CloudNativePG's naming conventions for a cluster's endpoint and Secrets.
func cnpgServer(cluster, database string) transport.Server {
	if database == "" {
		database = cnpgDefaultDatabase
	}
	return transport.Server{
		Host: cluster + cnpgRWSuffix, Port: cnpgPort, Database: database,
		CredentialsSecret: cluster + cnpgAppSuffix, UsernameKey: usernameKey, PasswordKey: passwordKey,
		CASecret: cluster + cnpgCASuffix, CAKey: caKey,
	}
}

// needsCA reports whether any transport verifies the server certificate.
func needsCA(tb *benchv1.TunnelBenchmark) bool {
	for _, t := range tb.Spec.Transports {
		switch {
		case t.Type == benchv1.TransportTLS && t.EffectiveSSLMode() != benchv1.SSLModeRequire,
			t.Type == benchv1.TransportSSH && t.SSH != nil && t.SSH.SSLMode == "verify-ca",
			t.Type == benchv1.TransportPooler && t.EffectivePooler().ServerTLS == "verify-full":
			return true
		}
	}
	return false
}

func (r *TunnelBenchmarkReconciler) checkSecret(ctx context.Context, namespace, name, what string, keys ...string) error {
	secret := &corev1.Secret{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, secret)
	if apierrors.IsNotFound(err) {
		return &serverError{Reason: benchv1.ReasonSecretNotFound,
			Message: fmt.Sprintf("Secret %s/%s (%s) not found: create it or fix spec.server", namespace, name, what)}
	}
	if err != nil {
		return fmt.Errorf("cannot get Secret %s/%s: %w", namespace, name, err)
	}
	for _, k := range keys {
		if len(secret.Data[k]) == 0 {
			return &serverError{Reason: benchv1.ReasonInvalidSecret,
				Message: fmt.Sprintf("Secret %s/%s (%s) has no key %q", namespace, name, what, k)}
		}
	}
	return nil
}
