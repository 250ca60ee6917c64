package benchmark

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tunnelbench/tunnelbench/test/docblock"
	"github.com/tunnelbench/tunnelbench/test/yamldocs"
)

func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := yamldocs.Decode(data)
	if err != nil {
		t.Fatalf("cannot decode YAML: %v", err)
	}
	return objs
}

// TestSamplesAreAccepted applies every sample to the real API server (dry run): the samples the
// docs point to (docs/user-guide/benchmark.md) must pass the CRD's schema and CEL rules.
func TestSamplesAreAccepted(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	files, _ := filepath.Glob(filepath.Join("..", "..", "config", "samples", "bench_*.yaml"))
	if len(files) == 0 {
		t.Fatal("no samples found")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, obj := range decodeAll(t, data) {
				obj.SetNamespace(ns)
				if err := testClient.Create(context.Background(), obj, client.DryRunAll); err != nil {
					t.Errorf("sample %s rejected: %v", obj.GetName(), err)
				}
			}
		})
	}
}

// TestDefaultInstallApplies renders config/default with kubectl's kustomize and applies it (dry
// run) to the real API server.
func TestDefaultInstallApplies(t *testing.T) {
	needsEnvtest(t)
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	out, err := exec.Command(kubectl, "kustomize", filepath.Join("..", "..", "config", "default")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v", err)
	}
	ctx := context.Background()
	system := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tunnelbench-system"}}
	if err := testClient.Create(ctx, system); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, obj := range decodeAll(t, out) {
		kinds[obj.GetKind()]++
		err := testClient.Create(ctx, obj, client.DryRunAll)
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Errorf("%s %s rejected: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	for _, k := range []string{"CustomResourceDefinition", "Deployment", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Service",
		"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
		if kinds[k] == 0 {
			t.Errorf("config/default renders no %s (got %v)", k, kinds)
		}
	}
}

// TestDocumentedKustomizeInstall runs the kustomize install as docs/operations/install.md writes it
// (its block marked "kustomize"), as a user with a kubeconfig of their own, against the real API
// server; only --dry-run=server is added, so that webhooks pointing at a Service without pods do
// not reach the other tests.
func TestDocumentedKustomizeInstall(t *testing.T) {
	needsEnvtest(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	block, err := docblock.Read(filepath.Join(root, "docs", "operations", "install.md"), "kustomize")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(block, "kubectl apply") != 1 {
		t.Fatalf("the kustomize block should hold one kubectl apply:\n%s", block)
	}
	block = strings.Replace(block, "kubectl apply", "kubectl apply --dry-run=server", 1)
	ctx := context.Background()
	system := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tunnelbench-system"}}
	if err := testClient.Create(ctx, system); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	user, err := testEnv.AddUser(envtest.User{Name: "docs-reader", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KUBECONFIG="+path, "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the documented install failed: %v\n%s\n%s", err, block, out)
	}
	for _, want := range []string{"customresourcedefinition.apiextensions.k8s.io/tunnelbenchmarks.bench.tunnelbench.io",
		"deployment.apps/", "validatingwebhookconfiguration.admissionregistration.k8s.io/"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the documented install did not apply %s:\n%s", want, out)
		}
	}
}
