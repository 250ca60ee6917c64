package benchmark

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
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
	s, err := transport.ServerOf(tb)
	if err != nil {
		return s, &serverError{Reason: conditions.ReasonInvalidSpec, Fatal: true, Message: err.Error()}
	}
	switch {
	case tb.Spec.Server.CNPG != nil:
		if err := r.checkCluster(ctx, tb, tb.Spec.Server.CNPG.ClusterName); err != nil {
			return s, err
		}
	case tb.Spec.Server.Managed != nil:
		// Created once: a pass that reads the benchmark from a stale cache after it ended must
		// not bring the deleted Cluster back.
		if tb.Status.ManagedCluster == "" {
			if problem := tb.ManagedStorageProblem(); problem != "" {
				return s, &serverError{Reason: conditions.ReasonInvalidSpec, Fatal: true, Message: problem}
			}
			if err := r.ensureManagedCluster(ctx, tb); err != nil {
				return s, err
			}
			tb.Status.ManagedCluster = tb.ManagedClusterName()
		}
		if err := r.checkCluster(ctx, tb, tb.ManagedClusterName()); err != nil {
			return s, err
		}
	}

	if err := r.checkSecret(ctx, tb.Namespace, s.CredentialsSecret, "the credentials", s.UsernameKey, s.PasswordKey); err != nil {
		return s, err
	}
	if s.CASecret != "" && transport.VerifiesServer(tb, s) {
		if err := r.checkSecret(ctx, tb.Namespace, s.CASecret, "the server CA", s.CAKey); err != nil {
			return s, err
		}
	}
	for _, t := range tb.Spec.Transports {
		tr, err := transport.For(transport.Context{Benchmark: tb, Spec: t, Server: s})
		if err != nil {
			return s, &serverError{Reason: conditions.ReasonInvalidSpec, Fatal: true, Message: err.Error()}
		}
		for _, ref := range tr.UserSecrets() {
			if err := r.checkSecret(ctx, tb.Namespace, ref.Name, ref.What, ref.Keys...); err != nil {
				return s, err
			}
		}
	}
	if transport.NeedsServerPod(tb, s) {
		return r.resolveServerPod(ctx, tb, s)
	}
	return s, nil
}

// ensureManagedCluster has the issuer of spec.tls issue the managed cluster's server certificate,
// then creates the benchmark's own CloudNativePG Cluster with it. A Cluster (or Certificate) of
// that name that the benchmark does not control is refused, never adopted.
func (r *TunnelBenchmarkReconciler) ensureManagedCluster(ctx context.Context, tb *benchv1.TunnelBenchmark) error {
	if tb.Spec.TLS != nil {
		wait := orDefault(r.CertificateWait, DefaultCertificateWait)
		cert := transport.CertificatePeer(tb, specs.ManagedServerCertificate(tb), wait)
		ready, err := r.ensurePeer(ctx, tb, cert)
		var problem *peerProblem
		switch {
		case errors.As(err, &problem):
			return &serverError{Reason: problemReason(problem, conditions.ReasonCertificateNotReady), Message: problem.message, Fatal: true}
		case err != nil:
			return err
		case !ready:
			// The Certificate's own wait is bounded from its creation; this bound only backs it up.
			return &serverError{Reason: conditions.ReasonCertificateNotReady, Wait: 2 * wait,
				Message: fmt.Sprintf("waiting for cert-manager to issue Certificate %s", cert.Object.GetName())}
		}
	}
	cluster := transport.Peer{
		Object:       specs.ManagedCluster(tb, r.PostgresImage),
		NotInstalled: "CloudNativePG is not installed (no Cluster kind): install it to use spec.server.managed",
		Created: func() (string, string) {
			return "ClusterCreated", "Created CloudNativePG Cluster " + tb.ManagedClusterName()
		},
	}
	_, err := r.ensurePeer(ctx, tb, cluster)
	var problem *peerProblem
	switch {
	case !errors.As(err, &problem):
		return err
	case problem.notOwned:
		return &serverError{Reason: conditions.ReasonOwnershipConflict, Message: problem.message, Fatal: true}
	}
	return &serverError{Reason: conditions.ReasonClusterNotReady, Message: problem.message,
		Wait: orDefault(r.ClusterWait, DefaultClusterWait)}
}

// problemReason is the failure reason of a peer's problem: the refusal of someone else's object,
// or what the peer's owner says.
func problemReason(p *peerProblem, reason string) string {
	if p.notOwned {
		return conditions.ReasonOwnershipConflict
	}
	return cmp.Or(p.reason, reason)
}

func (r *TunnelBenchmarkReconciler) checkSecret(ctx context.Context, namespace, name, what string, keys ...string) error {
	secret := &corev1.Secret{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, secret)
	if apierrors.IsNotFound(err) {
		return &serverError{Reason: conditions.ReasonSecretNotFound,
			Message: fmt.Sprintf("Secret %s/%s (%s) not found: create it or fix spec.server", namespace, name, what)}
	}
	if err != nil {
		return fmt.Errorf("cannot get Secret %s/%s: %w", namespace, name, err)
	}
	for _, k := range keys {
		if len(secret.Data[k]) == 0 {
			return &serverError{Reason: conditions.ReasonInvalidSecret,
				Message: fmt.Sprintf("Secret %s/%s (%s) has no key %q", namespace, name, what, k)}
		}
	}
	return nil
}
