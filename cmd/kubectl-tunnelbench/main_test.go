package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/testing/apitest"
)

// pluginEnv is a real kube-apiserver (envtest, with the project's CRDs) with the namespace db-team,
// an administrator's client, and the plugin run through a kubeconfig file as a user's kubectl
// would have it.
func pluginEnv(t *testing.T) (client.Client, func(args ...string) (string, error)) {
	t.Helper()
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true}
	cfg := apitest.Start(t, env)
	user, err := env.AddUser(envtest.User{Name: "engineer", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kcPath := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kcPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	scheme := newScheme()
	utilruntime.Must(corev1.AddToScheme(scheme))
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "db-team"}}); err != nil {
		t.Fatal(err)
	}
	return c, func(args ...string) (string, error) {
		var out bytes.Buffer
		root := newRoot(&out)
		root.SetArgs(append(args, "--kubeconfig", kcPath, "-n", "db-team"))
		root.SetContext(ctx)
		err := root.Execute()
		return out.String(), err
	}
}

// TestPlugin runs the plugin's commands against a real kube-apiserver.
func TestPlugin(t *testing.T) {
	c, plugin := pluginEnv(t)
	ctx := context.Background()
	// The golden tests' completed benchmark, stored with its status, and a second one after a
	// change that cost tls a fifth.
	before := fixtureBenchmark(t)
	store(t, c, before)
	after := fixtureBenchmark(t)
	after.Name = "paths-after"
	for i := range after.Status.Results {
		if r := &after.Status.Results[i]; r.Transport == "tls" {
			for j := range r.Runs {
				r.Runs[j].TPS *= 0.8
			}
		}
	}
	store(t, c, after)

	// What init writes, the real API server takes (schema and CEL rules), with no edit.
	t.Run("init", func(t *testing.T) { testInitAccepted(t, c, plugin) })
	t.Run("plan from the namespace's pilots", func(t *testing.T) { testPlanFindsPilots(t, plugin) })

	out, err := plugin("report", "paths")
	if err != nil || !strings.Contains(out, "db-team/paths: Completed") || !strings.Contains(out, "20100") ||
		!strings.Contains(out, "0.856× [0.82, 0.89]") {
		t.Errorf("report: %v\n%s", err, out)
	}
	out, err = plugin("report")
	if err != nil || !strings.Contains(out, "paths-after") || !strings.Contains(out, "Completed") {
		t.Errorf("list: %v\n%s", err, out)
	}
	htmlPath := filepath.Join(t.TempDir(), "paths.html")
	out, err = plugin("report", "paths", "-o", "html", "--file", htmlPath)
	if page, _ := os.ReadFile(htmlPath); err != nil || !strings.Contains(out, htmlPath) || !bytes.Contains(page, []byte("<svg")) {
		t.Errorf("html: %v\n%s", err, out)
	}
	if _, err = plugin("report", "paths", "-o", "yaml"); err == nil || !strings.Contains(err.Error(), "want one of") {
		t.Errorf("an unknown format: %v", err)
	}
	if _, err = plugin("report", "missing"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a missing benchmark: %v", err)
	}

	out, err = plugin("compare", "paths", "paths-after")
	if err != nil || !strings.Contains(out, "slower relative to direct by more than 3 %: tls") {
		t.Errorf("compare: %v\n%s", err, out)
	}
	_, err = plugin("compare", "paths", "paths-after", "--fail-on-regression")
	var regression *regressionError
	if !errors.As(err, &regression) || regression.transports[0] != "tls" {
		t.Errorf("--fail-on-regression: %v", err)
	}
	if _, err = plugin("compare", "paths", "paths", "--fail-on-regression"); err != nil {
		t.Errorf("a benchmark against itself: %v", err)
	}

	out, err = plugin("rerun", "paths")
	if err != nil || !strings.Contains(out, "a rerun of paths") {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	list := &benchv1.TunnelBenchmarkList{}
	if err := c.List(ctx, list, client.InNamespace("db-team")); err != nil {
		t.Fatal(err)
	}
	reruns := 0
	for _, tb := range list.Items {
		if strings.HasPrefix(tb.Name, "paths-") && tb.Name != "paths-after" {
			reruns++
			if tb.Status.Phase != "" || len(tb.Spec.Transports) != 3 || tb.Annotations[benchv1.GroupVersion.Group+"/rerun-of"] != "paths" {
				t.Errorf("the rerun %s: %+v", tb.Name, tb)
			}
		}
	}
	if reruns != 1 {
		t.Errorf("%d reruns", reruns)
	}

	out, err = plugin("cancel", "paths-after")
	if err != nil || !strings.Contains(out, "paths-after cancelled") {
		t.Fatalf("cancel: %v\n%s", err, out)
	}
	cancelled := &benchv1.TunnelBenchmark{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "db-team", Name: "paths-after"}, cancelled); err != nil || !cancelled.Spec.Cancel {
		t.Errorf("after cancel, spec.cancel = %v (%v)", cancelled.Spec.Cancel, err)
	}
}

func fixtureBenchmark(t *testing.T) *benchv1.TunnelBenchmark {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "present", "render", "testdata", "benchmark.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tb := &benchv1.TunnelBenchmark{}
	if err := yaml.UnmarshalStrict(b, tb); err != nil {
		t.Fatal(err)
	}
	return tb
}

// store creates the benchmark and then writes its status, as the operator would have.
func store(t *testing.T, c client.Client, tb *benchv1.TunnelBenchmark) {
	t.Helper()
	ctx := context.Background()
	status := tb.Status
	if err := c.Create(ctx, tb); err != nil {
		t.Fatal(err)
	}
	tb.Status = status
	if err := c.Status().Update(ctx, tb); err != nil {
		t.Fatal(err)
	}
}

// testPlanFindsPilots plans a precision target of the stored benchmarks' setup: the plugin finds
// both as pilots in the namespace (the manifest defaulted by the API server's dry run, so that its
// unset fields compare equal to theirs), or only the one --like names; a manifest of another load
// finds none and needs a pilot.
func testPlanFindsPilots(t *testing.T, plugin func(args ...string) (string, error)) {
	manifest := func(clients int) string {
		tb := fixtureBenchmark(t)
		tb.Name, tb.Status = "precise", benchv1.TunnelBenchmarkStatus{}
		tb.Spec.Load.Clients, tb.Spec.Load.Repetitions = int32(clients), 8
		tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
		b, err := yaml.Marshal(tb)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "precise.yaml")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	same := manifest(4)
	out, err := plugin("plan", "-f", same)
	if err != nil || !strings.Contains(out, "tls in paths:") || !strings.Contains(out, "tls in paths-after:") ||
		!strings.Contains(out, "PLANNED: ") || strings.Contains(out, "needs a pilot") {
		t.Errorf("plan: %v\n%s", err, out)
	}
	out, err = plugin("plan", "-f", same, "--like", "paths-after")
	if err != nil || strings.Contains(out, "tls in paths:") || !strings.Contains(out, "tls in paths-after:") {
		t.Errorf("plan --like: %v\n%s", err, out)
	}
	out, err = plugin("plan", "-f", manifest(16))
	if err != nil || !strings.Contains(out, "PLANNED: needs a pilot (no completed benchmark of the same setup in db-team)") {
		t.Errorf("plan of another load: %v\n%s", err, out)
	}
	if _, err = plugin("plan", "-f", manifest(16), "--like", "paths"); err == nil || !strings.Contains(err.Error(), "spec.load") {
		t.Errorf("plan --like a pilot of another load: %v", err)
	}
}
