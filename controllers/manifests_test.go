package controllers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// README points to must pass the CRD's schema and CEL rules.
func TestSamplesAreAccepted(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	files, _ := filepath.Glob(filepath.Join("..", "config", "samples", "bench_*.yaml"))
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
	out, err := exec.Command(kubectl, "kustomize", filepath.Join("..", "config", "default")).Output()
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
