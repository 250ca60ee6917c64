package webhookcert

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Rotator keeps the webhook's certificate: every replica of the operator runs one (each serves
// the webhook, leader or not), and they agree through the Secret (optimistic writes).
type Rotator struct {
	// Client reads and writes without a cache: it runs before the manager's cache starts.
	Client client.Client
	// Secret is the Secret of the CA and the server certificate, in the operator's namespace.
	Secret types.NamespacedName
	// WebhookConfiguration names the ValidatingWebhookConfiguration and the
	// MutatingWebhookConfiguration whose caBundles it keeps (one name, both kinds).
	WebhookConfiguration string
	// Hosts are the server certificate's names: the webhook Service's DNS names.
	Hosts []string
	// CertDir is where the webhook server reads tls.crt and tls.key (and reloads them).
	CertDir  string
	Validity Validity
	// Interval is how often it looks again; an hour is far within RenewBefore.
	Interval time.Duration
	Log      logr.Logger
}

// NeedLeaderElection is false: every replica serves the webhook, and needs the certificate.
func (r *Rotator) NeedLeaderElection() bool { return false }

// Start keeps the certificate until ctx ends (a manager Runnable), looking again every Interval;
// a failed pass is retried sooner.
func (r *Rotator) Start(ctx context.Context) error {
	for {
		wait := r.Interval
		if err := r.Ensure(ctx); err != nil {
			r.Log.Error(err, "Cannot keep the webhook's certificate; trying again")
			wait = min(wait, 30*time.Second)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Ensure makes one pass: the Secret created or renewed when Decide says so, the caBundle set to
// its CA (and the previous one), then the files written: in that order, so that the API server
// trusts a new CA before the webhook presents a certificate it signed.
func (r *Rotator) Ensure(ctx context.Context) error {
	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, r.Secret, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cannot get Secret %s: %w", r.Secret, err)
	}
	exists := err == nil
	plan, err := Decide(secret.Data, r.Hosts, time.Now(), r.Validity)
	if err != nil {
		return err
	}
	if plan.Data != nil {
		if err := r.write(ctx, secret, exists, plan); err != nil {
			return err
		}
		// Another replica may have written first: what is stored is what counts.
		if err := r.Client.Get(ctx, r.Secret, secret); err != nil {
			return fmt.Errorf("cannot get Secret %s: %w", r.Secret, err)
		}
	}
	if err := r.patchBundle(ctx, Bundle(secret.Data)); err != nil {
		return err
	}
	return r.writeFiles(secret.Data)
}

// write stores the plan; a conflict with another replica's write is no error (its data is read
// back).
func (r *Rotator) write(ctx context.Context, secret *corev1.Secret, exists bool, plan Plan) error {
	secret.Data = plan.Data
	var err error
	if exists {
		err = r.Client.Update(ctx, secret)
	} else {
		secret.ObjectMeta = metav1.ObjectMeta{Namespace: r.Secret.Namespace, Name: r.Secret.Name,
			Labels: map[string]string{"app.kubernetes.io/name": "tunnelbench", "app.kubernetes.io/component": "webhook"}}
		secret.Type = corev1.SecretTypeTLS
		err = r.Client.Create(ctx, secret)
	}
	switch {
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return nil
	case err != nil:
		return fmt.Errorf("cannot write Secret %s: %w", r.Secret, err)
	}
	r.Log.Info("Renewed the webhook's certificate", "secret", r.Secret.String(), "why", plan.Why)
	return nil
}

// patchBundle sets every webhook's caBundle of both configurations to bundle.
func (r *Rotator) patchBundle(ctx context.Context, bundle []byte) error {
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	validatingClients := func() (out []*admissionregistrationv1.WebhookClientConfig) {
		for i := range validating.Webhooks {
			out = append(out, &validating.Webhooks[i].ClientConfig)
		}
		return out
	}
	if err := r.patchConfiguration(ctx, "ValidatingWebhookConfiguration", validating, bundle, validatingClients); err != nil {
		return err
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	mutatingClients := func() (out []*admissionregistrationv1.WebhookClientConfig) {
		for i := range mutating.Webhooks {
			out = append(out, &mutating.Webhooks[i].ClientConfig)
		}
		return out
	}
	return r.patchConfiguration(ctx, "MutatingWebhookConfiguration", mutating, bundle, mutatingClients)
}

// patchConfiguration reads cfg, the kind's configuration named WebhookConfiguration, and sets the
// caBundle of each of its webhooks' clients to bundle.
func (r *Rotator) patchConfiguration(ctx context.Context, kind string, cfg client.Object, bundle []byte,
	clients func() []*admissionregistrationv1.WebhookClientConfig) error {
	if err := r.Client.Get(ctx, types.NamespacedName{Name: r.WebhookConfiguration}, cfg); err != nil {
		return fmt.Errorf("cannot get %s %s: %w", kind, r.WebhookConfiguration, err)
	}
	patch := client.MergeFromWithOptions(cfg.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	changed := false
	for _, c := range clients() {
		if !bytes.Equal(c.CABundle, bundle) {
			c.CABundle = bundle
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := r.Client.Patch(ctx, cfg, patch); err != nil {
		return fmt.Errorf("cannot set the caBundle of %s %s: %w", kind, r.WebhookConfiguration, err)
	}
	return nil
}

// writeFiles writes the server certificate and key where the webhook server reads them, each
// through a rename so that it never reads half a file, and only when they changed (the server's
// watcher reloads on every write).
func (r *Rotator) writeFiles(data map[string][]byte) error {
	if err := os.MkdirAll(r.CertDir, 0o700); err != nil {
		return err
	}
	// The key first: a watcher that reloads on the certificate finds its key already there.
	for _, name := range []string{KeyKey, CertKey} {
		path := filepath.Join(r.CertDir, name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data[name]) {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data[name], 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	return nil
}
