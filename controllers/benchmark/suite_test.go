package benchmark

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/metrics"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/testing/operatorenv"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

// The envtest suite runs a real kube-apiserver and etcd (built by hack/tools.sh) with the
// generated CRD installed (internal/testing/operatorenv). There is no kubelet and no Job
// controller: tests play their part by creating the Job's pod with a termination message and
// marking the Job finished.
var (
	testCfg    *rest.Config
	testClient client.Client
	// testEnv is the running envtest, for tests that need a user of their own (a kubeconfig).
	testEnv    *envtest.Environment
	testScheme = operatorenv.Scheme()
)

func TestMain(m *testing.M) {
	os.Exit(operatorenv.Main(m, filepath.Join("..", ".."), testScheme, func(env *operatorenv.Env) {
		testCfg, testClient, testEnv = env.Config, env.Client, env.Environment
	}))
}

// needsEnvtest skips the test under -short, where TestMain starts no envtest: every test that talks
// to the API server calls it first.
func needsEnvtest(t testing.TB) {
	t.Helper()
	operatorenv.Needs(t)
}

// operator is a running manager with the TunnelBenchmark controller, as the real operator runs it.
type operator struct {
	// cache is what the operator keeps in memory.
	cache   client.Reader
	metrics *metrics.Recorder
	reg     *prometheus.Registry
	stop    context.CancelFunc
	done    chan error
}

// startOperator starts a manager; stopping it (or the test ending) plays an operator crash. The
// options adjust the reconciler, e.g. to shorten a wait that a test runs out on purpose: the
// defaults here are generous, because a test that plays CloudNativePG or cert-manager must not
// lose a race against a short wait on a loaded machine.
func startOperator(t *testing.T, options ...func(*TunnelBenchmarkReconciler)) *operator {
	t.Helper()
	// The operator runs as its ServiceAccount, holding only the generated ClusterRole: every
	// controller test doubles as a least-privilege check of config/rbac/role.yaml.
	return startOperatorAs(t, operatorUser, nil, options...)
}

// configAs is the test's API access as user, a ServiceAccount of the operator's namespace.
func configAs(user string) *rest.Config { return operatorenv.ConfigAs(testCfg, user) }

// startOperatorAs starts a manager as user, watching the namespaces (every one when none), with
// the operator's cache options.
func startOperatorAs(t *testing.T, user string, namespaces []string, options ...func(*TunnelBenchmarkReconciler)) *operator {
	t.Helper()
	needsEnvtest(t)
	operatorCfg := configAs(user)
	mgr, err := ctrl.NewManager(operatorCfg, ctrl.Options{
		Scheme:  testScheme,
		Cache:   CacheOptions(namespaces),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		t.Fatalf("cannot create the manager: %v", err)
	}
	reg := prometheus.NewRegistry()
	op := &operator{cache: mgr.GetCache(), metrics: metrics.NewRecorder(reg), reg: reg, done: make(chan error, 1)}
	r := &TunnelBenchmarkReconciler{
		Client:          mgr.GetClient(),
		APIReader:       mgr.GetAPIReader(),
		Recorder:        mgr.GetEventRecorder("tunnelbench-controller"),
		Metrics:         op.metrics,
		Defaults:        specs.RunnerDefaults{Image: "tunnelbench/runner:test", PullPolicy: corev1.PullIfNotPresent, WaitTimeout: time.Minute},
		ServerWait:      3 * time.Second,
		ClusterWait:     time.Minute,
		CertificateWait: time.Minute,
		PollInterval:    500 * time.Millisecond,
		PostgresImage:   "tunnelbench/postgres:15-test",
		LockNamespace:   lockNamespace,
	}
	for _, o := range options {
		o(r)
	}
	// Each test starts its own manager, so the controller name is reused on purpose.
	if err := r.SetupWithManager(mgr, controller.Options{SkipNameValidation: ptr.To(true)}); err != nil {
		t.Fatalf("cannot set up the controller: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	op.stop = cancel
	go func() { op.done <- mgr.Start(ctx) }()
	t.Cleanup(op.Stop)
	return op
}

// Stop stops the manager and waits for it.
func (o *operator) Stop() {
	if o.stop == nil {
		return
	}
	o.stop()
	<-o.done
	o.stop = nil
}

const operatorUser = operatorenv.OperatorUser

// lockNamespace is the operator's namespace in these tests, where the servers' Leases are.
const lockNamespace = operatorenv.LockNamespace

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	return operatorenv.NewNamespace(t, testClient)
}

// eventually polls check until it returns nil or the timeout expires.
func eventually(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	poll.Until(t, timeout, 100*time.Millisecond, what, check)
}

// consistently checks that check keeps returning nil for the whole duration.
func consistently(t *testing.T, duration time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(duration)
	for time.Now().Before(deadline) {
		if err := check(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestOperatorIdentityIsRestricted proves the impersonation above is effective: the operator may
// get a Secret by name but not list Secrets, may create a benchmark (a schedule's) but not update
// one, and may not write a schedule.
func TestOperatorIdentityIsRestricted(t *testing.T) {
	needsEnvtest(t)
	cfg := rest.CopyConfig(testCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: operatorUser}
	c, err := client.New(cfg, client.Options{Scheme: testScheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	if err := c.List(context.Background(), &corev1.SecretList{}, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets as the operator: %v, want Forbidden", err)
	}
	tb := newBenchmark(ns, "rbac")
	if err := c.Create(context.Background(), tb); err != nil {
		t.Fatalf("creating a benchmark as the operator, as a schedule does: %v", err)
	}
	tb.Spec.Load.Clients = 8
	if err := c.Update(context.Background(), tb); !apierrors.IsForbidden(err) {
		t.Errorf("updating a benchmark as the operator: %v, want Forbidden", err)
	}
	stb := &benchv1.ScheduledTunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rbac"},
		Spec: benchv1.ScheduledTunnelBenchmarkSpec{Schedule: "@daily", BenchmarkTemplate: benchv1.TunnelBenchmarkTemplate{Spec: tb.Spec}}}
	if err := c.Create(context.Background(), stb); !apierrors.IsForbidden(err) {
		t.Errorf("creating a schedule as the operator: %v, want Forbidden", err)
	}
}
