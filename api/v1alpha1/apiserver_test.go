package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/testing/benchfixture"
)

// The CRD's schema and CEL rules are tested here, beside the types and markers they come from,
// against a real kube-apiserver and etcd (envtest) with only this project's CRDs installed: no
// controller runs. The API server starts once, for the first test that needs it; a -short run
// starts none and skips those tests.
var (
	apiServerOnce sync.Once
	apiEnv        *envtest.Environment
	apiClient     client.Client
	apiServerErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if apiEnv != nil {
		if err := apiEnv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "cannot stop envtest: %v\n", err)
		}
	}
	os.Exit(code)
}

// needsAPIServer starts the API server once and skips the test under -short.
func needsAPIServer(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs envtest (kube-apiserver and etcd, KUBEBUILDER_ASSETS): skipped under -short, `make test` runs it")
	}
	apiServerOnce.Do(func() {
		if os.Getenv("KUBEBUILDER_ASSETS") == "" {
			apiServerErr = fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with `make test` (hack/test.sh builds the envtest assets)")
			return
		}
		scheme := runtime.NewScheme()
		utilruntime.Must(clientgoscheme.AddToScheme(scheme))
		utilruntime.Must(benchv1.AddToScheme(scheme))
		apiEnv = &envtest.Environment{
			CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
			ErrorIfCRDPathMissing: true,
		}
		cfg, err := apiEnv.Start()
		if err != nil {
			apiServerErr = fmt.Errorf("cannot start envtest: %w", err)
			return
		}
		apiClient, apiServerErr = client.New(cfg, client.Options{Scheme: scheme})
	})
	if apiServerErr != nil {
		t.Fatal(apiServerErr)
	}
}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	needsAPIServer(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tb-api-"}}
	if err := apiClient.Create(context.Background(), ns); err != nil {
		t.Fatalf("cannot create a namespace: %v", err)
	}
	return ns.Name
}

// needsEnvtest is needsAPIServer, by the name the cases moved from the controllers' suite use.
func needsEnvtest(t *testing.T) { t.Helper(); needsAPIServer(t) }

// newBenchmark is a valid benchmark against the CloudNativePG cluster "pg" (benchfixture.New).
func newBenchmark(ns, name string, transports ...benchv1.TransportSpec) *benchv1.TunnelBenchmark {
	return benchfixture.New(ns, name, transports...)
}

func getBenchmark(t *testing.T, ns, name string) *benchv1.TunnelBenchmark {
	t.Helper()
	tb := &benchv1.TunnelBenchmark{}
	if err := apiClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, tb); err != nil {
		t.Fatalf("cannot get benchmark %s: %v", name, err)
	}
	return tb
}

func issuer() *benchv1.BenchmarkTLS {
	return &benchv1.BenchmarkTLS{IssuerRef: benchv1.IssuerReference{Name: "bench-ca", Kind: "ClusterIssuer"}}
}
