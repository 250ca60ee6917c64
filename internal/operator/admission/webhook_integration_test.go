package admission_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/admission"
	"github.com/tunnelbench/tunnelbench/internal/operator/webhookcert"
	"github.com/tunnelbench/tunnelbench/internal/testing/apitest"
	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

const (
	webhookName = "tunnelbench-validating"
	operatorNS  = "tb-system"
	teamNS      = "team-a"
)

// webhookEnv is a real kube-apiserver whose ValidatingWebhookConfiguration calls the operator's
// webhook server on loopback, with the certificate the Rotator made and the caBundle it set.
type webhookEnv struct {
	admin   client.Client
	cfg     *rest.Config
	rotator *webhookcert.Rotator
	port    int
	// access is the validator the webhook serves, which the schedules' controller asks too.
	access *admission.Validator
}

func startWebhookEnv(t *testing.T) *webhookEnv {
	t.Helper()
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true}
	cfg := apitest.Start(t, env)
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(benchv1.AddToScheme(scheme))
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ns := range []string{operatorNS, teamNS, "victim"} {
		mustCreate(t, admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	port := freePort(t)
	mustCreate(t, admin, webhookConfiguration(port))
	mustCreate(t, admin, authorConfiguration(port))

	certDir := t.TempDir()
	rotator := &webhookcert.Rotator{Client: admin, Secret: types.NamespacedName{Namespace: operatorNS, Name: "webhook-cert"},
		WebhookConfiguration: webhookName, Hosts: []string{"127.0.0.1"}, CertDir: certDir,
		Validity: webhookcert.DefaultValidity, Interval: time.Hour}
	if err := rotator.Ensure(ctx); err != nil {
		t.Fatalf("the rotator's first pass: %v", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: certDir})})
	if err != nil {
		t.Fatal(err)
	}
	validator := &admission.Validator{Client: mgr.GetClient(),
		Policy: admission.Policy{DefaultRunnerImage: "tunnelbench:dev", RunnerImages: []string{"registry.corp/tb/*"}}}
	if err := validator.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := (&admission.ScheduleValidator{Benchmarks: validator, DryRun: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := (admission.ScheduleAuthor{}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() { cancel(); <-done })
	grantUsers(t, admin)
	w := &webhookEnv{admin: admin, cfg: cfg, rotator: rotator, port: port, access: validator}
	// The webhook serves once the manager started: an admin's benchmark is admitted then.
	poll.Until(t, 30*time.Second, 200*time.Millisecond, "the webhook to serve", func() error {
		return w.create(ctx, "system:admin", externalBenchmark("probe", "creds"))
	})
	return w
}

// webhookConfiguration calls the webhook at a loopback URL, on creates as the chart does, failing
// closed, with no caBundle: the Rotator sets it.
func webhookConfiguration(port int) *admissionregistrationv1.ValidatingWebhookConfiguration {
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhookName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "vtunnelbenchmark.bench.tunnelbench.io", FailurePolicy: &fail, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr.To[int32](10),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d%s", port, admission.Path))},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{benchv1.GroupVersion.Group},
					APIVersions: []string{benchv1.GroupVersion.Version}, Resources: []string{"tunnelbenchmarks"}}}},
		}, {
			Name: "vscheduledtunnelbenchmark.bench.tunnelbench.io", FailurePolicy: &fail, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr.To[int32](10),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d%s", port, admission.SchedulePath))},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{benchv1.GroupVersion.Group},
					APIVersions: []string{benchv1.GroupVersion.Version}, Resources: []string{"scheduledtunnelbenchmarks"}}}},
		}}}
}

// authorConfiguration is the chart's MutatingWebhookConfiguration: a schedule's author recorded
// on its creates and updates, at a loopback URL, with no caBundle: the Rotator sets it.
func authorConfiguration(port int) *admissionregistrationv1.MutatingWebhookConfiguration {
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhookName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mscheduledtunnelbenchmark.bench.tunnelbench.io", FailurePolicy: &fail, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr.To[int32](10),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d%s", port, admission.AuthorPath))},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{benchv1.GroupVersion.Group},
					APIVersions: []string{benchv1.GroupVersion.Version}, Resources: []string{"scheduledtunnelbenchmarks"}}}},
		}}}
}

// grantUsers: alice, bob and carol may create benchmarks and schedules in team-a, dave only
// schedules; alice, carol and dave may get the Secret creds there; carol may create NetworkChaos
// and benchmarks in victim and use the ClusterIssuer corp-ca.
func grantUsers(t *testing.T, admin client.Client) {
	t.Helper()
	role := func(name, ns string, rules ...rbacv1.PolicyRule) {
		if ns == "" {
			mustCreate(t, admin, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules})
			return
		}
		mustCreate(t, admin, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules})
	}
	bind := func(name, ns, kind, subjectKind string, subjects ...string) {
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
		var s []rbacv1.Subject
		for _, subject := range subjects {
			s = append(s, rbacv1.Subject{Kind: subjectKind, Name: subject, APIGroup: rbacv1.GroupName})
		}
		if ns == "" {
			mustCreate(t, admin, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref, Subjects: s})
			return
		}
		mustCreate(t, admin, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, RoleRef: ref, Subjects: s})
	}
	role("bench-author", teamNS, rbacv1.PolicyRule{APIGroups: []string{benchv1.GroupVersion.Group},
		Resources: []string{"tunnelbenchmarks", "scheduledtunnelbenchmarks"}, Verbs: []string{"create", "get", "update", "patch"}})
	bind("bench-author", teamNS, "Role", rbacv1.UserKind, "alice", "bob", "carol")
	role("creds-reader", teamNS, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"},
		ResourceNames: []string{"creds"}, Verbs: []string{"get"}})
	bind("creds-reader", teamNS, "Role", rbacv1.UserKind, "alice", "carol", "dave")
	// dave may create schedules, and read the Secret, but not create benchmarks.
	role("schedule-author", teamNS, rbacv1.PolicyRule{APIGroups: []string{benchv1.GroupVersion.Group},
		Resources: []string{"scheduledtunnelbenchmarks"}, Verbs: []string{"create"}})
	bind("schedule-author", teamNS, "Role", rbacv1.UserKind, "dave")
	role("victim-chaos", "victim", rbacv1.PolicyRule{APIGroups: []string{"chaos-mesh.org"},
		Resources: []string{"networkchaos"}, Verbs: []string{"create"}}, rbacv1.PolicyRule{
		APIGroups: []string{benchv1.GroupVersion.Group}, Resources: []string{"tunnelbenchmarks"}, Verbs: []string{"create"}})
	bind("victim-chaos", "victim", "Role", rbacv1.UserKind, "carol")
	role("corp-ca-user", "", rbacv1.PolicyRule{APIGroups: []string{"cert-manager.io"}, Resources: []string{"clusterissuers"},
		ResourceNames: []string{"corp-ca"}, Verbs: []string{"use"}})
	bind("corp-ca-user", "", "ClusterRole", rbacv1.UserKind, "carol")
	role("certificates", teamNS, rbacv1.PolicyRule{APIGroups: []string{"cert-manager.io"}, Resources: []string{"certificates"},
		Verbs: []string{"create"}})
	bind("certificates", teamNS, "Role", rbacv1.GroupKind, "system:authenticated")
}

// create creates tb as user (impersonated; system:admin is the envtest's own administrator).
func (w *webhookEnv) create(ctx context.Context, user string, tb *benchv1.TunnelBenchmark) error {
	cfg := rest.CopyConfig(w.cfg)
	if user != "system:admin" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	}
	c, err := client.New(cfg, client.Options{Scheme: w.admin.Scheme()})
	if err != nil {
		return err
	}
	return c.Create(ctx, tb)
}

func externalBenchmark(name, secret string) *benchv1.TunnelBenchmark {
	return &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: teamNS, Name: name},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server: benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "db.team-a.svc", Database: "app",
				CredentialsSecret: benchv1.LocalObjectReference{Name: secret}}},
			Transports: []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}},
			Load:       benchv1.LoadSpec{Script: "select 1;"}}}
}

// TestWebhookAdmitsOnlyWhatTheCreatorMay: the real API server asks the webhook, which asks the API
// server whether the requesting user may do each thing the benchmark would have the operator do;
// a refusal names the field, the user, the verb and the object.
func TestWebhookAdmitsOnlyWhatTheCreatorMay(t *testing.T) {
	w := startWebhookEnv(t)
	ctx := context.Background()
	chaos := func(tb *benchv1.TunnelBenchmark) *benchv1.TunnelBenchmark {
		tb.Spec.Server.External.Host = "db.victim.svc"
		tb.Spec.Network = &benchv1.NetworkSpec{Emulator: benchv1.EmulatorChaosMesh, Bandwidth: "1Mbit"}
		return tb
	}
	clusterIssuer := func(tb *benchv1.TunnelBenchmark) *benchv1.TunnelBenchmark {
		tb.Spec.TLS = &benchv1.BenchmarkTLS{IssuerRef: benchv1.IssuerReference{Name: "corp-ca", Kind: "ClusterIssuer"}}
		tb.Spec.Transports = []benchv1.TransportSpec{{Name: "mtls", Type: benchv1.TransportTLS, TLS: &benchv1.TLSTransport{
			SSLMode: benchv1.SSLModeRequire, ClientCertificate: &benchv1.ClientCertificate{CommonName: "app"}}}}
		return tb
	}
	image := func(img string) func(*benchv1.TunnelBenchmark) *benchv1.TunnelBenchmark {
		return func(tb *benchv1.TunnelBenchmark) *benchv1.TunnelBenchmark {
			tb.Spec.Runner = &benchv1.RunnerSpec{Image: img}
			return tb
		}
	}
	same := func(tb *benchv1.TunnelBenchmark) *benchv1.TunnelBenchmark { return tb }
	victimServer := func(tb *benchv1.TunnelBenchmark) *benchv1.TunnelBenchmark {
		tb.Spec.Server.External.Host = "pg.victim"
		return tb
	}
	openVPN := func(tb *benchv1.TunnelBenchmark) *benchv1.TunnelBenchmark {
		tb.Spec.Transports = append(tb.Spec.Transports, benchv1.TransportSpec{Name: "ovpn", Type: benchv1.TransportVPN,
			VPN: &benchv1.VPNTransport{Kind: benchv1.VPNOpenVPN}})
		return tb
	}
	tests := []struct {
		name, user, secret string
		shape              func(*benchv1.TunnelBenchmark) *benchv1.TunnelBenchmark
		refused            []string
	}{
		{"a Secret the user may get", "alice", "creds", same, nil},
		{"a Secret the user may not get", "bob", "creds", same,
			[]string{"spec.server.external.credentialsSecret", `user "bob" may not "get" on secrets team-a/creds`}},
		{"another Secret than the one granted", "alice", "admin-creds", same,
			[]string{`user "alice" may not "get" on secrets team-a/admin-creds`}},
		{"a chaos-mesh link into a namespace the user may not shape", "alice", "creds", chaos,
			[]string{"spec.network", `"create" on networkchaos.chaos-mesh.org in namespace victim`}},
		{"a chaos-mesh link into a namespace the user may shape", "carol", "creds", chaos, nil},
		{"another namespace's server, by a user who may not benchmark there", "alice", "creds", victimServer,
			[]string{"spec.server.external.host", `user "alice" may not "create" on tunnelbenchmarks.bench.tunnelbench.io in namespace victim`}},
		{"another namespace's server, by a user who may benchmark there", "carol", "creds", victimServer, nil},
		{"a ClusterIssuer not granted", "alice", "creds", clusterIssuer,
			[]string{"spec.tls.issuerRef", `"use" on clusterissuers.cert-manager.io corp-ca`}},
		{"a ClusterIssuer granted by name", "carol", "creds", clusterIssuer, nil},
		{"a runner image off the list, even for an administrator", "system:admin", "creds", image("evil.example/steal:1"),
			[]string{"spec.runner.image", "runner.allowedImages", "registry.corp/tb/*"}},
		{"a listed runner image", "alice", "creds", image("registry.corp/tb/runner:2"), nil},
		{"a privileged transport this operator does not allow, even for an administrator", "system:admin", "creds", openVPN,
			[]string{"vpn.kind", "NET_ADMIN", "transports.allowPrivileged"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := w.create(ctx, tt.user, tt.shape(externalBenchmark(fmt.Sprintf("b%d", i), tt.secret)))
			if tt.refused == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("admitted")
			}
			for _, want := range tt.refused {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal does not say %q:\n%v", want, err)
				}
			}
		})
	}
	t.Run("with the operator down, no create gets through and no finalizer is held", func(t *testing.T) {
		// The webhook points at a port nothing listens on, as when the operator's pod is gone.
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := w.admin.Get(ctx, types.NamespacedName{Name: webhookName}, cfg); err != nil {
			t.Fatal(err)
		}
		cfg.Webhooks[0].ClientConfig.URL = ptr.To(fmt.Sprintf("https://127.0.0.1:%d%s", freePort(t), admission.Path))
		if err := w.admin.Update(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if err := w.create(ctx, "system:admin", externalBenchmark("while-down", "creds")); err == nil ||
			!strings.Contains(err.Error(), "failed calling webhook") {
			t.Errorf("a create while the webhook is down: %v, want it refused", err)
		}
		tb := &benchv1.TunnelBenchmark{}
		if err := w.admin.Get(ctx, types.NamespacedName{Namespace: teamNS, Name: "b0"}, tb); err != nil {
			t.Fatal(err)
		}
		tb.Finalizers = append(tb.Finalizers, "bench.tunnelbench.io/test")
		if err := w.admin.Update(ctx, tb); err != nil {
			t.Fatalf("adding a finalizer while the webhook is down: %v", err)
		}
		tb.Finalizers = nil
		tb.Spec.Cancel = true
		if err := w.admin.Update(ctx, tb); err != nil {
			t.Fatalf("removing a finalizer and cancelling while the webhook is down: %v", err)
		}
	})
}

// TestWebhookCertificateRotation: a renewed CA and certificate reach the API server (caBundle) and
// the webhook server (its files, reloaded) without a restart: creates go on being admitted.
func TestWebhookCertificateRotation(t *testing.T) {
	w := startWebhookEnv(t)
	ctx := context.Background()
	secret := &corev1.Secret{}
	if err := w.admin.Get(ctx, w.rotator.Secret, secret); err != nil {
		t.Fatal(err)
	}
	oldCA := string(secret.Data[webhookcert.CAKey])
	// Time passes: with a renewal window longer than the CA's life, the next pass finds the CA
	// within it, as it will 30 days before its end.
	w.rotator.Validity.RenewBefore = 2 * webhookcert.DefaultValidity.CA
	if err := w.rotator.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.admin.Get(ctx, w.rotator.Secret, secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data[webhookcert.CAKey]) == oldCA || string(secret.Data[webhookcert.PreviousCAKey]) != oldCA {
		t.Fatalf("the CA was not renewed with the old one kept")
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := w.admin.Get(ctx, types.NamespacedName{Name: webhookName}, cfg); err != nil {
		t.Fatal(err)
	}
	if string(cfg.Webhooks[0].ClientConfig.CABundle) != string(webhookcert.Bundle(secret.Data)) {
		t.Fatal("the caBundle is not the new CA and the old one")
	}
	// The webhook server reloads the new certificate from its files, without a restart.
	poll.Until(t, 30*time.Second, 200*time.Millisecond, "the webhook to serve its new certificate", func() error {
		served, err := servedCertificate(w.port)
		if err == nil && string(served) != string(secret.Data[webhookcert.CertKey]) {
			err = fmt.Errorf("it still serves the old one")
		}
		return err
	})
	// The API server trusts the new CA: the webhook is asked (a refusal proves it) and admits.
	if err := w.create(ctx, "bob", externalBenchmark("after-rotation", "creds")); err == nil ||
		!strings.Contains(err.Error(), `user "bob" may not`) {
		t.Fatalf("bob's benchmark after the rotation: %v", err)
	}
	if err := w.create(ctx, "alice", externalBenchmark("after-rotation", "creds")); err != nil {
		t.Fatalf("alice refused after the rotation: %v", err)
	}
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("cannot create %T %s: %v", obj, obj.GetName(), err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// servedCertificate is the PEM certificate the webhook server presents now.
func servedCertificate(port int) ([]byte, error) {
	// Not verified: the test reads what is served, whoever signed it.
	insecure := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // see above
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), insecure)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: conn.ConnectionState().PeerCertificates[0].Raw}), nil
}

// createSchedule creates, as user, a schedule of tb's spec.
func (w *webhookEnv) createSchedule(ctx context.Context, user, schedule string, tb *benchv1.TunnelBenchmark) error {
	cfg := rest.CopyConfig(w.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: w.admin.Scheme()})
	if err != nil {
		return err
	}
	return c.Create(ctx, &benchv1.ScheduledTunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: teamNS, Name: tb.Name},
		Spec: benchv1.ScheduledTunnelBenchmarkSpec{Schedule: schedule,
			BenchmarkTemplate: benchv1.TunnelBenchmarkTemplate{Spec: tb.Spec}}})
}

// TestScheduleWebhookChecksTheTemplateAsTheUser: the benchmark a schedule would create is checked
// as the user applying the schedule (the operator creates it later as itself), against the
// TunnelBenchmark's own rules (a dry run), and its schedule must parse; each refusal names the
// schedule's field.
func TestScheduleWebhookChecksTheTemplateAsTheUser(t *testing.T) {
	w := startWebhookEnv(t)
	ctx := context.Background()
	tooManyThreads := externalBenchmark("threads", "creds")
	tooManyThreads.Spec.Load.Clients, tooManyThreads.Spec.Load.Threads = 2, 4
	tests := []struct {
		name, user, schedule string
		tb                   *benchv1.TunnelBenchmark
		want                 []string
	}{
		{"the Secrets the user may get", "alice", "0 3 * * *", externalBenchmark("nightly", "creds"), nil},
		{"a Secret the user may not get", "bob", "0 3 * * *", externalBenchmark("borrowed", "creds"),
			[]string{"spec.benchmarkTemplate.spec.server.external.credentialsSecret", `user "bob" may not "get" on secrets team-a/creds`}},
		{"a schedule that does not parse", "alice", "every night", externalBenchmark("unparsed", "creds"),
			[]string{"spec.schedule", "is not a cron schedule"}},
		{"a template the benchmark's rules refuse", "alice", "@daily", tooManyThreads,
			[]string{"spec.benchmarkTemplate.spec", "threads must not exceed spec.load.clients"}},
		{"a user who may create schedules but not benchmarks", "dave", "@daily", externalBenchmark("by-proxy", "creds"),
			[]string{"spec.benchmarkTemplate", `user "dave" may not "create" on tunnelbenchmarks.bench.tunnelbench.io in namespace team-a`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := w.createSchedule(ctx, tc.user, tc.schedule, tc.tb)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("admitted")
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%v\nwant %q in it", err, s)
				}
			}
		})
	}
	// bob may update alice's schedule, but not to borrow what he may not get: the update is checked
	// as bob; a change of its labels or its suspension is not a new template.
	stb := &benchv1.ScheduledTunnelBenchmark{}
	if err := w.admin.Get(ctx, client.ObjectKey{Namespace: teamNS, Name: "nightly"}, stb); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(w.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "bob", Groups: []string{"system:authenticated"}}
	bob, err := client.New(cfg, client.Options{Scheme: w.admin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	stb.Labels = map[string]string{"team": "a"}
	stb.Spec.Suspend = ptr.To(true)
	if err := bob.Update(ctx, stb); err != nil {
		t.Fatalf("a label changed and the schedule suspended by bob: %v", err)
	}
	assertAuthor(t, stb, "alice")
	// Nobody writes the author but the webhook: bob's own value is put back.
	stb.Annotations[benchv1.AnnotationAuthor] = `{"username":"bob"}`
	if err := bob.Update(ctx, stb); err != nil {
		t.Fatalf("an annotation changed by bob: %v", err)
	}
	assertAuthor(t, stb, "alice")
	stb.Spec.Schedule = "0 4 * * *"
	if err := bob.Update(ctx, stb); err == nil || !strings.Contains(err.Error(), `user "bob" may not "get" on secrets team-a/creds`) {
		t.Fatalf("bob's new template: %v", err)
	}
}

// assertAuthor checks that the schedule records user as its author.
func assertAuthor(t *testing.T, stb *benchv1.ScheduledTunnelBenchmark, user string) {
	t.Helper()
	got, err := admission.RecordedAuthor(stb)
	if err != nil || got.Username != user || !slices.Contains(got.Groups, "system:authenticated") {
		t.Fatalf("the schedule's author is %+v (%v), want %s with its groups", got, err, user)
	}
}

// TestScheduleAuthorAskedBeforeEachRun: the author the webhook recorded is whoever last changed
// what the runs do, and the question the schedules' controller asks before each run is the
// webhook's own, of that author, with the rights they hold then: a user who loses get on the
// Secret stops the runs that read it; one who holds it again lets them go on.
func TestScheduleAuthorAskedBeforeEachRun(t *testing.T) {
	w := startWebhookEnv(t)
	ctx := context.Background()
	if err := w.createSchedule(ctx, "alice", "@hourly", externalBenchmark("hourly", "creds")); err != nil {
		t.Fatal(err)
	}
	stb := &benchv1.ScheduledTunnelBenchmark{}
	if err := w.admin.Get(ctx, client.ObjectKey{Namespace: teamNS, Name: "hourly"}, stb); err != nil {
		t.Fatal(err)
	}
	assertAuthor(t, stb, "alice")
	refusals := func() field.ErrorList {
		t.Helper()
		author, err := admission.RecordedAuthor(stb)
		if err != nil {
			t.Fatal(err)
		}
		errs, err := w.access.ScheduleRefusals(ctx, author, stb)
		if err != nil {
			t.Fatal(err)
		}
		return errs
	}
	if errs := refusals(); len(errs) != 0 {
		t.Fatalf("alice, who may, is refused: %v", errs)
	}
	// alice loses get on the Secret (her binding rewritten without her).
	binding := &rbacv1.RoleBinding{}
	if err := w.admin.Get(ctx, client.ObjectKey{Namespace: teamNS, Name: "creds-reader"}, binding); err != nil {
		t.Fatal(err)
	}
	binding.Subjects = slices.DeleteFunc(binding.Subjects, func(s rbacv1.Subject) bool { return s.Name == "alice" })
	if err := w.admin.Update(ctx, binding); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, 200*time.Millisecond, "alice's loss to reach the authorizer", func() error {
		errs := refusals()
		if len(errs) == 0 {
			return fmt.Errorf("still allowed")
		}
		if got := errs.ToAggregate().Error(); !strings.Contains(got, `user "alice" may not "get" on secrets team-a/creds`) ||
			!strings.Contains(got, "spec.benchmarkTemplate.spec.server.external.credentialsSecret") {
			t.Fatalf("the refusal does not name the access and its field: %s", got)
		}
		return nil
	})
	// carol, who may, changes the schedule: she is its author now, and the runs may go on.
	cfg := rest.CopyConfig(w.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "carol", Groups: []string{"system:authenticated"}}
	carol, err := client.New(cfg, client.Options{Scheme: w.admin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	stb.Spec.Schedule = "@daily"
	if err := carol.Update(ctx, stb); err != nil {
		t.Fatalf("carol's change: %v", err)
	}
	assertAuthor(t, stb, "carol")
	if errs := refusals(); len(errs) != 0 {
		t.Fatalf("carol, who may, is refused: %v", errs)
	}
	// A schedule with no author (made while the webhook was off) names what to do.
	delete(stb.Annotations, benchv1.AnnotationAuthor)
	if _, err := admission.RecordedAuthor(stb); !errors.Is(err, admission.ErrNoAuthor) ||
		!strings.Contains(err.Error(), "apply its spec again") {
		t.Errorf("no author: %v", err)
	}
}
