package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/tunnelbench/tunnelbench/internal/operator/admission"
	"github.com/tunnelbench/tunnelbench/internal/operator/webhookcert"
)

// webhookFlags configure the admission webhook and, unless cert-manager issues it, the rotation
// of its certificate.
type webhookFlags struct {
	port                                int
	certDir, namespace, secret, service string
	configuration, allowedImages        string
	manageCert                          bool
	rotator                             *webhookcert.Rotator
}

func (w *webhookFlags) bind(fs *flag.FlagSet) {
	fs.IntVar(&w.port, "webhook-port", 9443, "port of the admission webhook (0: no webhook)")
	fs.StringVar(&w.certDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs",
		"directory of the webhook's tls.crt and tls.key")
	fs.BoolVar(&w.manageCert, "webhook-manage-cert", true,
		"make and renew the webhook's certificate (false: cert-manager issues it into webhook-cert-dir)")
	fs.StringVar(&w.namespace, "webhook-namespace", "", "the operator's namespace, where the webhook's Secret and Service are")
	fs.StringVar(&w.secret, "webhook-secret", "", "Secret of the webhook's CA and certificate, when the operator makes them")
	fs.StringVar(&w.service, "webhook-service", "", "Service of the webhook, named by the certificate")
	fs.StringVar(&w.configuration, "webhook-configuration", "",
		"ValidatingWebhookConfiguration and MutatingWebhookConfiguration (one name) whose caBundles the operator keeps, "+
			"when it makes the certificate")
	fs.StringVar(&w.allowedImages, "runner-allowed-images", "",
		"comma-separated images spec.runner.image may name besides the runner image (a trailing * matches a prefix)")
}

// prepare makes the webhook's certificate before the manager starts, whose webhook server reads
// it at once; its Rotator then renews it while the operator runs.
func (w *webhookFlags) prepare(cfg *rest.Config, scheme *runtime.Scheme, log logr.Logger) error {
	if w.port == 0 || !w.manageCert {
		return nil
	}
	if w.namespace == "" || w.secret == "" || w.service == "" || w.configuration == "" {
		return fmt.Errorf("--webhook-namespace, --webhook-secret, --webhook-service and --webhook-configuration are needed " +
			"to make the webhook's certificate")
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	svc := w.service + "." + w.namespace + ".svc"
	w.rotator = &webhookcert.Rotator{Client: c, Secret: types.NamespacedName{Namespace: w.namespace, Name: w.secret},
		WebhookConfiguration: w.configuration, Hosts: []string{svc, svc + ".cluster.local"}, CertDir: w.certDir,
		Validity: webhookcert.DefaultValidity, Interval: time.Hour, Log: log.WithName("webhook-cert")}
	// Helm creates the webhook configuration after the Deployment: a first pod may start before
	// it exists. It waits (not ready) instead of exiting, which would count as a restart.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		err := w.rotator.Ensure(ctx)
		if err == nil {
			return nil
		}
		log.Info("The webhook's certificate is not in place yet; trying again", "error", err.Error())
		select {
		case <-ctx.Done():
			return err
		case <-time.After(2 * time.Second):
		}
	}
}

func (w *webhookFlags) server(tlsOpts []func(*tls.Config)) webhook.Server {
	port := w.port
	if port == 0 {
		port = -1
	}
	return webhook.NewServer(webhook.Options{Port: port, CertDir: w.certDir, TLSOpts: tlsOpts})
}

// setup registers the validators, the schedules' author record and the Rotator with the manager.
func (w *webhookFlags) setup(mgr ctrl.Manager, v *admission.Validator) error {
	if w.port == 0 {
		return nil
	}
	if err := v.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (admission.ScheduleAuthor{}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&admission.ScheduleValidator{Benchmarks: v, DryRun: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	if w.rotator != nil {
		return mgr.Add(w.rotator)
	}
	return nil
}

// access is the one authorizer of what users name, the webhook's and the schedules' controller's:
// nil without a webhook (nothing is checked then, as the chart's values say).
func (w *webhookFlags) access(mgr ctrl.Manager, policy admission.Policy) *admission.Validator {
	if w.port == 0 {
		return nil
	}
	return &admission.Validator{Client: mgr.GetClient(), Policy: policy}
}

// ready is the operator's readiness: with a webhook, once it serves, so that a benchmark applied
// right after `helm install --wait` finds it.
func (w *webhookFlags) ready(mgr ctrl.Manager) healthz.Checker {
	if w.port == 0 {
		return healthz.Ping
	}
	return mgr.GetWebhookServer().StartedChecker()
}
