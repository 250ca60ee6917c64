// Package operatorenv is the envtest of the reconcilers' test suites (controllers/benchmark,
// controllers/schedule): a real kube-apiserver and etcd with the project's CRDs, CloudNativePG's
// and cert-manager's, and the operator's ServiceAccount holding only the generated ClusterRole and
// the servers' Leases Role, as the chart installs them. Each suite's TestMain starts one with
// Main; its tests act as the operator through ConfigAs(OperatorUser), so that every reconciler
// test doubles as a least-privilege check of config/rbac.
package operatorenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// OperatorUser is the operator's ServiceAccount, as the tests impersonate it.
const OperatorUser = "system:serviceaccount:tunnelbench-system:tunnelbench-controller-manager"

// LockNamespace is the operator's namespace in the tests, where the servers' Leases are.
const LockNamespace = "tunnelbench-system"

// Env is a running envtest with the operator's rights installed.
type Env struct {
	// Config is the API server's administrator (the test itself).
	Config *rest.Config
	// Client is a client as Config, with Scheme.
	Client client.Client
	// Environment is the envtest, for a test that needs a user of its own (AddUser).
	Environment *envtest.Environment
}

// started is set once Main has started the package's envtest: one test binary, one envtest.
var started bool

// Scheme is the Kubernetes types and the project's, which the reconcilers and the tests read.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(benchv1.AddToScheme(s))
	return s
}

// Main is a reconciler suite's TestMain body: it starts the envtest (from the module's root, root
// relative to the package), hands it to use, runs the tests, stops it and returns the exit code.
// Under -short, and in a fuzz target's workers (fuzzing tests only pure code), it starts nothing,
// and Needs skips the tests that talk to the API server.
func Main(m *testing.M, root string, scheme *runtime.Scheme, use func(*Env)) int {
	flag.Parse()
	if testing.Short() || flag.Lookup("test.fuzz").Value.String() != "" {
		return m.Run()
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the tests with `make test` (hack/test.sh builds the envtest assets)")
		return 1
	}
	// CloudNativePG's and cert-manager's CRDs, so that the Clusters, Poolers and Certificates the
	// operator creates are validated by their projects' own schemas.
	thirdPartyCRDs := os.Getenv("THIRD_PARTY_CRDS")
	if thirdPartyCRDs == "" {
		fmt.Fprintln(os.Stderr, "THIRD_PARTY_CRDS is not set: run the tests with `make test` (hack/tools.sh crds fetches them)")
		return 1
	}
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases"), thirdPartyCRDs},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot start envtest: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "cannot stop envtest: %v\n", err)
		}
	}()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot create a client: %v\n", err)
		return 1
	}
	if err := grantOperatorRoles(c, root); err != nil {
		fmt.Fprintf(os.Stderr, "cannot install the operator's RBAC: %v\n", err)
		return 1
	}
	started = true
	use(&Env{Config: cfg, Client: c, Environment: env})
	return m.Run()
}

// Needs skips the test when Main started no envtest (-short): every test that talks to the API
// server calls it first.
func Needs(t testing.TB) {
	t.Helper()
	if !started {
		t.Skip("needs envtest (kube-apiserver and etcd, KUBEBUILDER_ASSETS): skipped under -short, `make test` runs it")
	}
}

// ConfigAs is the API access of cfg as user, a ServiceAccount of the operator's namespace.
func ConfigAs(cfg *rest.Config, user string) *rest.Config {
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:tunnelbench-system", "system:authenticated"}}
	return as
}

// NewNamespace creates a namespace for one test.
func NewNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	Needs(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tb-test-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("cannot create a namespace: %v", err)
	}
	return ns.Name
}

// zapLevel keeps the operator's info logs quiet unless TEST_VERBOSE_OPERATOR is set.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_VERBOSE_OPERATOR") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// grantOperatorRoles installs the generated ClusterRole (config/rbac/role.yaml) bound to the
// operator's user, and its namespace with the Role of the servers' Leases
// (config/rbac/server_locks_role.yaml).
func grantOperatorRoles(c client.Client, root string) error {
	role := &rbacv1.ClusterRole{}
	if err := readYAML(filepath.Join(root, "config", "rbac", "role.yaml"), role); err != nil {
		return err
	}
	locks := &rbacv1.Role{}
	if err := readYAML(filepath.Join(root, "config", "rbac", "server_locks_role.yaml"), locks); err != nil {
		return err
	}
	locks.Namespace = LockNamespace
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: OperatorUser}}
	for _, o := range []client.Object{
		role,
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tunnelbench-manager"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}, Subjects: subjects},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: LockNamespace}},
		locks,
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: LockNamespace, Name: "tunnelbench-server-locks"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: locks.Name}, Subjects: subjects},
	} {
		if err := c.Create(context.Background(), o); err != nil {
			return err
		}
	}
	return nil
}

func readYAML(path string, into any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(b, into)
}
