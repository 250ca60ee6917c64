// Package apitest starts a real kube-apiserver and etcd (envtest) for a package's tests.
package apitest

import (
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Start starts env for the test and stops it after; a -short run skips the test, since only
// `make test` builds the envtest binaries.
func Start(t *testing.T, env *envtest.Environment) *rest.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("needs envtest (kube-apiserver and etcd): `make test` runs it")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the tests with `make test` (hack/test.sh builds the envtest assets)")
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("cannot start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return cfg
}
