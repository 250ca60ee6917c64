//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
)

// startPrometheus runs Debian's Prometheus on the host, with the chart's alerting rules, and
// points it at the operator the way kube-prometheus does: the endpoints of the chart's metrics
// Service, HTTPS, and a ServiceAccount token bound to the chart's metrics-reader ClusterRole,
// which the operator checks with a TokenReview and a SubjectAccessReview. Debian builds
// Prometheus without Kubernetes service discovery, so the test discovers the endpoints itself
// (from the Service's EndpointSlices) and hands them to Prometheus through file_sd, with the
// labels kubernetes_sd would set. Like the chart's ServiceMonitor, it honors the series' own
// labels: a benchmark's "namespace" must not be overwritten by the operator's. It scrapes and
// evaluates the rules every 2 s, and returns its address.
func startPrometheus(t *testing.T, ns string) string {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prometheus"}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-prometheus-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: release + "-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}},
	}
	for _, o := range []client.Object{sa, binding} {
		if err := k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, binding) })
	token, err := run(t, "kubectl", "create", "token", sa.Name, "-n", ns, "--duration=1h")
	if err != nil {
		t.Fatalf("kubectl create token: %v: %s", err, token)
	}
	// Not t.TempDir(): a subtest's name may hold a comma, which file_sd refuses in a path.
	dir, err := os.MkdirTemp("", "e2e-prometheus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(strings.TrimSpace(token)), 0o600); err != nil {
		t.Fatal(err)
	}
	targets := metricsTargets(t)
	assertMetricsRefuseAnonymous(t, targets)
	targetsFile := filepath.Join(dir, "targets.json")
	if err := os.WriteFile(targetsFile, targets, 0o600); err != nil {
		t.Fatal(err)
	}
	rulesFile := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rulesFile, chartRules(t), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global: {scrape_interval: 2s, scrape_timeout: 2s, evaluation_interval: 2s}
rule_files: [%s]
scrape_configs:
- job_name: tunnelbench-operator
  honor_labels: true
  scheme: https
  tls_config: {insecure_skip_verify: true}
  authorization: {credentials_file: %s}
  file_sd_configs: [{files: [%s]}]
`, rulesFile, tokenFile, targetsFile)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	prom := exec.Command(env(t, "PROMETHEUS"), "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	var promLog bytes.Buffer
	prom.Stdout, prom.Stderr = &promLog, &promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = prom.Process.Kill()
		_ = prom.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", promLog.String())
		}
	})
	return addr
}

// chartRules are the chart's alerting rules as its PrometheusRule renders them: a rule file.
func chartRules(t *testing.T) []byte {
	t.Helper()
	out, err := run(t, env(t, "HELM"), "template", release, filepath.Join("..", "..", "charts", "tunnelbench"),
		"--show-only", "templates/prometheusrule.yaml", "--set", "prometheusRule.enabled=true")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	var rule struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(out), &rule); err != nil || rule.Spec == nil {
		t.Fatalf("the chart's PrometheusRule: %v\n%s", err, out)
	}
	b, err := yaml.Marshal(rule.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
