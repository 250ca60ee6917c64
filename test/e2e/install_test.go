//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/test/docblock"
)

// The registry the install page writes, and the one this test stands in for it: nothing listens
// there; the exported archives are imported into the node's containerd, as a push and a pull would.
const (
	documentedRegistry = "registry.example.com/tunnelbench"
	localRegistry      = "127.0.0.1:5999/tunnelbench-docs"
)

// docsInstall runs the install page's tested blocks (docs/operations/install.md) as a user reads
// them, with only the registry replaced: `make images REGISTRY=…`, then the archives "pushed"
// (imported into the node's containerd), then the documented helm command; the operator must come
// up on the images the page names.
func docsInstall(t *testing.T) {
	socket := os.Getenv("E2E_CONTAINERD_SOCKET")
	if socket == "" {
		t.Skip("E2E_CONTAINERD_SOCKET is not set: the archives stand for a registry only on the local cluster")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(root, "docs", "operations", "install.md")
	shell := func(block string) {
		t.Helper()
		text, err := docblock.Read(page, block)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, documentedRegistry) {
			t.Fatalf("the %q block no longer names %s: update this test's stand-in", block, documentedRegistry)
		}
		text = strings.ReplaceAll(text, documentedRegistry, localRegistry)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", text)
		cmd.Dir = root
		// helm and kubectl as a user has them: on the PATH.
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(env(t, "HELM"))+":"+os.Getenv("PATH"))
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the %q block of %s failed: %v\n%s\n%s", block, page, err, text, out)
		}
		t.Logf("the %q block ran in %.1f s", block, time.Since(start).Seconds())
	}

	shell("images")
	for _, name := range []string{"tunnelbench", "postgres"} {
		archive := filepath.Join(root, ".cache", "images", "export", name+".tar")
		if out, err := run(t, "ctr", "-a", socket, "-n", "k8s.io", "images", "import", archive); err != nil {
			t.Fatalf("ctr import %s: %v\n%s", archive, err, out)
		}
	}
	shell("install")

	deployments := &appsv1.DeploymentList{}
	if err := k8s.List(ctx, deployments, client.InNamespace(operatorNamespace),
		client.MatchingLabels{"app.kubernetes.io/instance": release}); err != nil {
		t.Fatal(err)
	}
	want := localRegistry + "/tunnelbench:"
	found := false
	for _, d := range deployments.Items {
		for _, c := range d.Spec.Template.Spec.Containers {
			if strings.HasPrefix(c.Image, want) {
				found = true
				if d.Status.AvailableReplicas < 1 {
					t.Errorf("deployment %s runs %s but is not available", d.Name, c.Image)
				}
			}
		}
	}
	if !found {
		t.Errorf("no deployment of release %s runs an image from %s: the documented install did not take", release,
			localRegistry)
	}
}
