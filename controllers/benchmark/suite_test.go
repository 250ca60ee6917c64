package benchmark

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/metrics"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

// The envtest suite runs a real kube-apiserver and etcd (built by hack/tools.sh) with the
// generated CRD installed. There is no kubelet and no Job controller: tests play their part by
// creating the Job's pod with a termination message and marking the Job finished.
var (
	testCfg    *rest.Config
	testClient client.Client
	// testEnv is the running envtest, for tests that need a user of their own (a kubeconfig).
	testEnv    *envtest.Environment
	testScheme = runtime.NewScheme()
	// envtestSkipped is set under -short: TestMain starts no apiserver and needsEnvtest skips.
	envtestSkipped bool
)

func TestMain(m *testing.M) {
	flag.Parse()
	// A fuzz target's workers run TestMain too: fuzzing tests only pure code, with no apiserver.
	if testing.Short() || flag.Lookup("test.fuzz").Value.String() != "" {
		envtestSkipped = true
		os.Exit(m.Run())
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the tests with `make test` (hack/test.sh builds the envtest assets)")
		os.Exit(1)
	}
	// CloudNativePG's and cert-manager's CRDs, so that the Clusters, Poolers and Certificates the
	// operator creates are validated by their projects' own schemas.
	thirdPartyCRDs := os.Getenv("THIRD_PARTY_CRDS")
	if thirdPartyCRDs == "" {
		fmt.Fprintln(os.Stderr, "THIRD_PARTY_CRDS is not set: run the tests with `make test` (hack/tools.sh crds fetches them)")
		os.Exit(1)
	}
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	utilruntime.Must(clientgoscheme.AddToScheme(testScheme))
	utilruntime.Must(benchv1.AddToScheme(testScheme))

	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases"), thirdPartyCRDs},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := testEnv.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot start envtest: %v\n", err)
		os.Exit(1)
	}
	testCfg = cfg
	testClient, err = client.New(cfg, client.Options{Scheme: testScheme})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot create a client: %v\n", err)
		os.Exit(1)
	}
	if err := grantOperatorRole(); err != nil {
		fmt.Fprintf(os.Stderr, "cannot install the operator's RBAC: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "cannot stop envtest: %v\n", err)
	}
	os.Exit(code)
}

// needsEnvtest skips the test under -short, where TestMain starts no envtest: every test that talks
// to the API server calls it first.
func needsEnvtest(t testing.TB) {
	t.Helper()
	if envtestSkipped {
		t.Skip("needs envtest (kube-apiserver and etcd, KUBEBUILDER_ASSETS): skipped under -short, `make test` runs it")
	}
}

// zapLevel keeps the operator's info logs quiet unless TEST_VERBOSE_OPERATOR is set.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_VERBOSE_OPERATOR") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
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
func configAs(user string) *rest.Config {
	cfg := rest.CopyConfig(testCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:tunnelbench-system", "system:authenticated"}}
	return cfg
}

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

const operatorUser = "system:serviceaccount:tunnelbench-system:tunnelbench-controller-manager"

// lockNamespace is the operator's namespace in these tests, where the servers' Leases are.
const lockNamespace = "tunnelbench-system"

// grantOperatorRole installs the generated ClusterRole and binds it to the operator's user.
func grantOperatorRole() error {
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(b, role); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tunnelbench-manager"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: operatorUser}},
	}
	ctx := context.Background()
	if err := testClient.Create(ctx, role); err != nil {
		return err
	}
	if err := testClient.Create(ctx, binding); err != nil {
		return err
	}
	return grantServerLocksRole(ctx)
}

// grantServerLocksRole creates the operator's namespace with the Role of the servers' Leases
// (config/rbac/server_locks_role.yaml), bound to the operator's user.
func grantServerLocksRole(ctx context.Context) error {
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "server_locks_role.yaml"))
	if err != nil {
		return err
	}
	role := &rbacv1.Role{}
	if err := yaml.Unmarshal(b, role); err != nil {
		return err
	}
	role.Namespace = lockNamespace
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: lockNamespace, Name: "tunnelbench-server-locks"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: operatorUser}},
	}
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lockNamespace}}, role, binding} {
		if err := testClient.Create(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	needsEnvtest(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tb-test-"}}
	if err := testClient.Create(context.Background(), ns); err != nil {
		t.Fatalf("cannot create a namespace: %v", err)
	}
	return ns.Name
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
