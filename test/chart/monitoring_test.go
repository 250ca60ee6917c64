package chart

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/tunnelbench/tunnelbench/internal/operator/metrics"
	"github.com/tunnelbench/tunnelbench/internal/present/dashboard"
)

// registered are the names of the series the operator exports.
func registered(t *testing.T) []string {
	t.Helper()
	descs := make(chan *prometheus.Desc, 64)
	go func() {
		metrics.NewRecorder(prometheus.NewRegistry()).Describe(descs)
		metrics.NewScheduleRecorder(prometheus.NewRegistry()).Describe(descs)
		close(descs)
	}()
	name := regexp.MustCompile(`fqName: "([^"]+)"`)
	var out []string
	for d := range descs {
		if m := name.FindStringSubmatch(d.String()); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

var metricName = regexp.MustCompile(`tunnelbench_[a-z_]+`)

// TestDashboardConfigMap: the chart ships the dashboard the SDK builds, as the ConfigMap Grafana's
// sidecar loads, and every query asks for series the operator exports.
func TestDashboardConfigMap(t *testing.T) {
	needsHelm(t)
	if find(render(t), "ConfigMap", "tb-tunnelbench-dashboards") != nil {
		t.Error("a dashboard ConfigMap is rendered although dashboards.enabled is false")
	}
	cm := find(render(t, "dashboards.enabled=true", "dashboards.namespace=monitoring"), "ConfigMap", "tb-tunnelbench-dashboards")
	if cm == nil {
		t.Fatal("no dashboard ConfigMap")
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" || cm.GetNamespace() != "monitoring" {
		t.Errorf("labels %v, namespace %s", cm.GetLabels(), cm.GetNamespace())
	}
	data := unstructuredString(cm.Object, "data", "tunnelbench.json")
	want, err := dashboard.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(data) != strings.TrimSpace(string(want)) {
		t.Fatal("the chart's dashboard is not the one internal/present/dashboard builds: run make manifests")
	}
	var d struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct{ Name string } `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr       string            `json:"expr"`
				RawSQL     string            `json:"rawSql"`
				Datasource map[string]string `json:"datasource"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		t.Fatal(err)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	if d.UID != dashboard.UID || !slices.Equal(vars, []string{"datasource", "namespace", "benchmark", "transport", "history"}) {
		t.Errorf("uid %s, variables %v", d.UID, vars)
	}
	known := registered(t)
	for _, p := range d.Panels {
		if len(p.Targets) == 0 && p.Type != "row" {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			// The store's panels read it in SQL (the e2e runs it on the real store).
			if q.RawSQL != "" && q.Datasource["uid"] == "${history}" {
				continue
			}
			if q.Datasource["uid"] != "${datasource}" {
				t.Errorf("panel %q queries %v", p.Title, q.Datasource)
			}
			for _, m := range metricName.FindAllString(q.Expr, -1) {
				if !slices.Contains(known, m) {
					t.Errorf("panel %q asks for %s, which the operator does not export", p.Title, m)
				}
			}
		}
	}
}

// failedDescription is the alert's description for db/paths failed with Timeout.
const failedDescription = "The benchmark ended in Failed with reason Timeout: its Failed condition says what broke and " +
	"what to do (kubectl describe tunnelbenchmark -n db paths)."

// regressedDescription is the alert's description for db/nightly's ssh ratio.
const regressedDescription = "The newest benchmark of the schedule measured ssh's ratio beyond what its history varies by: " +
	"its Regressed condition says before and after (kubectl tunnelbench history -n db nightly)."

// TestPrometheusRule: the chart's rules pass promtool check rules, and promtool test rules shows the
// alerts firing for a failed benchmark and not for a completed one, and for a schedule's regressed
// figure and not for one within its history.
func TestPrometheusRule(t *testing.T) {
	needsHelm(t)
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not installed: hack/deps.sh installs Debian's prometheus, which ships it")
	}
	rule := find(render(t, "prometheusRule.enabled=true", "prometheusRule.severity=critical"), "PrometheusRule", "tb-tunnelbench")
	if rule == nil {
		t.Fatal("no PrometheusRule")
	}
	spec, err := yaml.Marshal(rule.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rules, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range metricName.FindAllString(string(spec), -1) {
		if !slices.Contains(registered(t), m) {
			t.Errorf("the rules use %s, which the operator does not export", m)
		}
	}
	tests := `rule_files: [rules.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'tunnelbench_benchmark_failed{namespace="db",benchmark="paths",reason="Timeout",instance="op:8443"}'
        values: '_ 1 1'
      - series: 'tunnelbench_benchmark_phase{namespace="db",benchmark="ok",phase="Completed"}'
        values: '1 1 1'
      - series: 'tunnelbench_schedule_regressed{namespace="db",schedule="nightly",transport="ssh",figure="ratio",instance="op:8443"}'
        values: '0 1 1'
      - series: 'tunnelbench_schedule_regressed{namespace="db",schedule="nightly",transport="tls",figure="ratio",instance="op:8443"}'
        values: '0 0 0'
    alert_rule_test:
      - eval_time: 0m
        alertname: TunnelBenchmarkRegressed
        exp_alerts: []
      - eval_time: 2m
        alertname: TunnelBenchmarkRegressed
        exp_alerts:
          - exp_labels: {severity: critical, namespace: db, schedule: nightly, transport: ssh, figure: ratio}
            exp_annotations:
              summary: "Schedule db/nightly: ssh's ratio regressed"
              description: "` + regressedDescription + `"
      - eval_time: 0m
        alertname: TunnelBenchmarkFailed
        exp_alerts: []
      - eval_time: 2m
        alertname: TunnelBenchmarkFailed
        exp_alerts:
          - exp_labels: {severity: critical, namespace: db, benchmark: paths, reason: Timeout}
            exp_annotations:
              summary: "TunnelBenchmark db/paths failed (Timeout)"
              description: "` + failedDescription + `"
`
	if err := os.WriteFile(filepath.Join(dir, "rules_test.yaml"), []byte(tests), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", rules}, {"test", "rules", filepath.Join(dir, "rules_test.yaml")}} {
		cmd := exec.Command(promtool, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr, cmd.Dir = &out, &out, dir
		if err := cmd.Run(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	}
}

func unstructuredString(obj map[string]any, fields ...string) string {
	cur := any(obj)
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[f]
	}
	s, _ := cur.(string)
	return s
}
