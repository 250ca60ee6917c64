// Package chart tests the Helm chart with the real helm binary (HELM, built by hack/tools.sh):
// lint, the rendered objects for a set of values, the schema's rejections, and that the chart's
// operator ClusterRole is exactly the one controller-gen generated.
package chart

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/tunnelbench/tunnelbench/test/yamldocs"
)

var chartDir = filepath.Join("..", "..", "charts", "tunnelbench")

// needsHelm skips the test under -short: it runs the helm binary, which `make test` builds.
func needsHelm(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the helm binary (HELM): skipped under -short, `make test` runs it")
	}
}

func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("HELM")
	if bin == "" {
		t.Fatal("HELM is not set: run the tests with `make test` (hack/test.sh builds helm)")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String(), errors.New(stderr.String())
	}
	return stdout.String(), nil
}

func render(t *testing.T, set ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", "tb", chartDir, "--namespace", "tunnelbench-system"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	objs, err := yamldocs.Decode([]byte(out))
	if err != nil {
		t.Fatalf("rendered YAML does not parse: %v\n%s", err, out)
	}
	return objs
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && (name == "" || o.GetName() == name) {
			return o
		}
	}
	return nil
}

// findSuffix is the first object of a kind whose name ends with suffix.
func findSuffix(objs []*unstructured.Unstructured, kind, suffix string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && strings.HasSuffix(o.GetName(), suffix) {
			return o
		}
	}
	return nil
}

func convert(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatal(err)
	}
}

func TestLint(t *testing.T) {
	needsHelm(t)
	for _, set := range [][]string{nil, {"--set", "metrics.serviceMonitor.enabled=true", "--set", "dashboards.enabled=true",
		"--set", "prometheusRule.enabled=true"}} {
		out, err := helm(t, append([]string{"lint", "--strict", chartDir}, set...)...)
		if err != nil || !strings.Contains(out, "0 chart(s) failed") {
			t.Errorf("helm lint %v: %v\n%s", set, err, out)
		}
	}
}

func TestDefaults(t *testing.T) {
	needsHelm(t)
	objs := render(t)
	for _, kind := range []string{"CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
		"Role", "RoleBinding", "Deployment", "Service"} {
		if find(objs, kind, "") == nil {
			t.Errorf("no %s rendered", kind)
		}
	}
	if find(objs, "ServiceMonitor", "") != nil {
		t.Error("a ServiceMonitor is rendered although metrics.serviceMonitor.enabled is false")
	}
	crd := find(objs, "CustomResourceDefinition", "")
	if crd.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
		t.Error("the CRD (and every result) must survive helm uninstall by default")
	}

	dep := &appsv1.Deployment{}
	convert(t, find(objs, "Deployment", "tb-tunnelbench"), dep)
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != "docker.io/tunnelbench/tunnelbench:dev" || c.ImagePullPolicy != "IfNotPresent" {
		t.Errorf("image %s %s", c.Image, c.ImagePullPolicy)
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--leader-elect=true", "--metrics-bind-address=:8443", "--metrics-secure=true",
		"--runner-image=docker.io/tunnelbench/tunnelbench:dev", "--runner-wait-timeout=2m"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if !*pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.SeccompProfile.Type != "RuntimeDefault" ||
		*c.SecurityContext.AllowPrivilegeEscalation || !*c.SecurityContext.ReadOnlyRootFilesystem ||
		c.SecurityContext.Capabilities.Drop[0] != "ALL" {
		t.Error("the operator pod does not meet the restricted Pod Security Standard")
	}
	if pod.ServiceAccountName != "tb-tunnelbench" {
		t.Errorf("serviceAccountName %q", pod.ServiceAccountName)
	}
}

// TestManagerRoleMatchesGenerated: the chart's operator ClusterRole must hold exactly the rules
// controller-gen derived from the reconciler's markers — no more, no less.
func TestManagerRoleMatchesGenerated(t *testing.T) {
	needsHelm(t)
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	generated := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(b, generated); err != nil {
		t.Fatal(err)
	}
	chartRole := &rbacv1.ClusterRole{}
	convert(t, find(render(t), "ClusterRole", "tb-tunnelbench-manager"), chartRole)
	if !reflect.DeepEqual(chartRole.Rules, generated.Rules) {
		t.Errorf("chart rules differ from config/rbac/role.yaml:\n chart: %+v\n  want: %+v", chartRole.Rules, generated.Rules)
	}
	// Secrets: read by name (server credentials), created and deleted (the SSH gateway's keys),
	// never listed or watched: the operator holds no other workload's secrets.
	for _, r := range chartRole.Rules {
		for _, res := range r.Resources {
			if res == "secrets" && strings.Join(r.Verbs, ",") != "create,delete,get" {
				t.Errorf("the operator's Secret verbs are %v, want create, delete, get", r.Verbs)
			}
		}
	}
}

func TestValues(t *testing.T) {
	needsHelm(t)
	tests := []struct {
		name  string
		set   []string
		check func(t *testing.T, objs []*unstructured.Unstructured)
	}{
		{
			name: "service monitor with the kube-prometheus-stack release label",
			set:  []string{"metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=kps"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				sm := find(objs, "ServiceMonitor", "")
				if sm == nil {
					t.Fatal("no ServiceMonitor")
				}
				if sm.GetLabels()["release"] != "kps" {
					t.Errorf("labels %v", sm.GetLabels())
				}
				eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
				ep := eps[0].(map[string]any)
				if ep["scheme"] != "https" || ep["port"] != "metrics" || ep["bearerTokenFile"] == nil || ep["honorLabels"] != true {
					t.Errorf("endpoint %v", ep)
				}
				svc := find(objs, "Service", "tb-tunnelbench-metrics")
				sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
				for k, v := range sel {
					if svc.GetLabels()[k] != v {
						t.Errorf("the ServiceMonitor selector %v does not select the metrics Service %v", sel, svc.GetLabels())
					}
				}
			},
		},
		{
			name: "namespace-scoped: a Role in each watched namespace, nothing cluster-wide for the manager",
			set:  []string{"watchNamespaces={team-a,team-b}"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				for _, o := range objs {
					if o.GetKind() == "ClusterRole" && strings.HasSuffix(o.GetName(), "-manager") {
						t.Errorf("ClusterRole %s rendered in namespace-scoped mode", o.GetName())
					}
				}
				for _, ns := range []string{"team-a", "team-b"} {
					var role, binding *unstructured.Unstructured
					for _, o := range objs {
						if o.GetNamespace() == ns && strings.HasSuffix(o.GetName(), "-manager") {
							switch o.GetKind() {
							case "Role":
								role = o
							case "RoleBinding":
								binding = o
							}
						}
					}
					if role == nil || binding == nil {
						t.Fatalf("no Role and RoleBinding in %s", ns)
					}
					rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
					if len(rules) < 5 {
						t.Errorf("the Role in %s has %d rules", ns, len(rules))
					}
				}
				dep := &appsv1.Deployment{}
				convert(t, find(objs, "Deployment", ""), dep)
				if args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--watch-namespaces=team-a,team-b") {
					t.Errorf("args %s", args)
				}
			},
		},
		{
			name: "local images, custom runner, no CRD",
			set: []string{"image.repository=local/tb", "image.tag=x1", "image.pullPolicy=Never",
				"runner.image=local/runner:y", "crds.install=false", "leaderElection.enabled=false"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				if find(objs, "CustomResourceDefinition", "") != nil || findSuffix(objs, "Role", "-leader-election") != nil {
					t.Error("CRD or leader-election Role rendered although disabled")
				}
				// The servers' Leases are granted in every mode, in the release's namespace only.
				locks := findSuffix(objs, "Role", "-server-locks")
				if locks == nil || findSuffix(objs, "RoleBinding", "-server-locks") == nil {
					t.Fatal("no Role and RoleBinding for the servers' Leases")
				}
				role := &rbacv1.Role{}
				convert(t, locks, role)
				if len(role.Rules) != 1 || role.Rules[0].Resources[0] != "leases" || slices.Contains(role.Rules[0].Verbs, "watch") {
					t.Errorf("the server-locks Role grants %+v, want get/list/create/update/delete on leases only", role.Rules)
				}
				// The run seal's key: its Secret made in the release's namespace, read by name only.
				seal := &rbacv1.Role{}
				convert(t, findSuffix(objs, "Role", "-run-seal"), seal)
				wantSeal := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
					{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"tb-tunnelbench-run-seal"},
						Verbs: []string{"get"}}}
				if seal.Namespace != "tunnelbench-system" || !reflect.DeepEqual(seal.Rules, wantSeal) ||
					findSuffix(objs, "RoleBinding", "-run-seal") == nil {
					t.Errorf("the run-seal Role %s/%s grants %+v, want %+v, bound", seal.Namespace, seal.Name, seal.Rules, wantSeal)
				}
				dep := &appsv1.Deployment{}
				convert(t, find(objs, "Deployment", ""), dep)
				c := dep.Spec.Template.Spec.Containers[0]
				args := strings.Join(c.Args, " ")
				if c.Image != "local/tb:x1" || c.ImagePullPolicy != "Never" ||
					!strings.Contains(args, "--runner-image=local/runner:y") || !strings.Contains(args, "--runner-image-pull-policy=Never") {
					t.Errorf("image %s %s args %s", c.Image, c.ImagePullPolicy, args)
				}
			},
		},
		{
			name: "the webhook by default: its own certificate, narrow rights, every create and update checked",
			set:  []string{"runner.allowedImages={registry.corp/tb/*,other:1}"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				_, hook, svc := firstWebhook(t, objs, "ValidatingWebhookConfiguration")
				// Creates only: an update webhook would hold finalizers while the operator is down.
				if rules := hook["rules"].([]any); !reflect.DeepEqual(rules[0].(map[string]any)["operations"], []any{"CREATE"}) {
					t.Errorf("rules %v, want CREATE only", rules)
				}
				if hook["failurePolicy"] != "Fail" || svc["name"] != "tb-tunnelbench-webhook" ||
					svc["path"] != "/validate-bench-tunnelbench-io-v1alpha1-tunnelbenchmark" || hook["namespaceSelector"] != nil {
					t.Errorf("webhook %v", hook)
				}
				// A schedule's author is recorded on create and update, by the same server.
				mhooks, mhook, msvc := firstWebhook(t, objs, "MutatingWebhookConfiguration")
				mrule := mhook["rules"].([]any)[0].(map[string]any)
				if len(mhooks) != 1 || mhook["failurePolicy"] != "Fail" || msvc["name"] != "tb-tunnelbench-webhook" ||
					msvc["path"] != "/mutate-bench-tunnelbench-io-v1alpha1-scheduledtunnelbenchmark" ||
					!reflect.DeepEqual(mrule["operations"], []any{"CREATE", "UPDATE"}) ||
					!reflect.DeepEqual(mrule["resources"], []any{"scheduledtunnelbenchmarks"}) {
					t.Errorf("mutating webhook %v", mhooks)
				}
				role := &rbacv1.ClusterRole{}
				convert(t, find(objs, "ClusterRole", "tb-tunnelbench-webhook"), role)
				want := []rbacv1.PolicyRule{
					{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
					{APIGroups: []string{"admissionregistration.k8s.io"},
						Resources:     []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"},
						ResourceNames: []string{"tb-tunnelbench-tunnelbench-system"}, Verbs: []string{"get", "patch"}}}
				if !reflect.DeepEqual(role.Rules, want) {
					t.Errorf("the webhook's ClusterRole grants %+v, want %+v", role.Rules, want)
				}
				cert := &rbacv1.Role{}
				convert(t, find(objs, "Role", "tb-tunnelbench-webhook-cert"), cert)
				if cert.Namespace != "tunnelbench-system" || len(cert.Rules) != 2 ||
					!reflect.DeepEqual(cert.Rules[1].ResourceNames, []string{"tb-tunnelbench-webhook-cert"}) {
					t.Errorf("the webhook certificate's Role %+v", cert)
				}
				dep := &appsv1.Deployment{}
				convert(t, find(objs, "Deployment", ""), dep)
				args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " ")
				for _, a := range []string{"--webhook-port=9443", "--webhook-manage-cert=true", "--webhook-secret=tb-tunnelbench-webhook-cert",
					"--run-seal-secret=tunnelbench-system/tb-tunnelbench-run-seal",
					"--webhook-configuration=tb-tunnelbench-tunnelbench-system", "--runner-allowed-images=registry.corp/tb/*,other:1"} {
					if !strings.Contains(args, a) {
						t.Errorf("args lack %s: %s", a, args)
					}
				}
			},
		},
		{
			name: "the webhook's certificate from cert-manager, only watched namespaces checked",
			set:  []string{"webhook.certManager.enabled=true", "watchNamespaces={team-a}"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				cfg := find(objs, "ValidatingWebhookConfiguration", "")
				for _, c := range []*unstructured.Unstructured{cfg, find(objs, "MutatingWebhookConfiguration", "")} {
					if c.GetAnnotations()["cert-manager.io/inject-ca-from"] != "tunnelbench-system/tb-tunnelbench-webhook" {
						t.Errorf("%s annotations %v", c.GetKind(), c.GetAnnotations())
					}
				}
				hooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
				values, _, _ := unstructured.NestedSlice(hooks[0].(map[string]any), "namespaceSelector", "matchExpressions")
				if len(values) != 1 || !reflect.DeepEqual(values[0].(map[string]any)["values"], []any{"team-a"}) {
					t.Errorf("namespaceSelector %v", values)
				}
				crt := find(objs, "Certificate", "tb-tunnelbench-webhook")
				if secret, _, _ := unstructured.NestedString(crt.Object, "spec", "secretName"); secret != "tb-tunnelbench-webhook-cert" ||
					find(objs, "Issuer", "tb-tunnelbench-webhook-selfsigned") == nil {
					t.Errorf("Certificate %v, or no self-signed Issuer", crt)
				}
				role := &rbacv1.ClusterRole{}
				convert(t, find(objs, "ClusterRole", "tb-tunnelbench-webhook"), role)
				if len(role.Rules) != 1 || find(objs, "Role", "tb-tunnelbench-webhook-cert") != nil {
					t.Errorf("cert-manager's certificate, yet the operator may patch the configuration or write the Secret: %+v", role.Rules)
				}
				dep := &appsv1.Deployment{}
				convert(t, find(objs, "Deployment", ""), dep)
				if args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--webhook-manage-cert=false") {
					t.Errorf("args %s", args)
				}
				if v := dep.Spec.Template.Spec.Volumes; len(v) != 2 || v[1].Secret == nil || v[1].Secret.SecretName != "tb-tunnelbench-webhook-cert" {
					t.Errorf("volumes %+v", v)
				}
			},
		},
		{
			name: "helm uninstall first ends every benchmark, as the operator",
			set:  []string{"watchNamespaces={team-a}", "uninstall.wait=30s"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				job := find(objs, "Job", "tb-tunnelbench-end-benchmarks")
				if job == nil || job.GetAnnotations()["helm.sh/hook"] != "pre-delete" {
					t.Fatalf("no pre-delete hook Job: %v", job)
				}
				spec, _, _ := unstructured.NestedMap(job.Object, "spec", "template", "spec")
				c := spec["containers"].([]any)[0].(map[string]any)
				if spec["serviceAccountName"] != "tb-tunnelbench" ||
					!reflect.DeepEqual(c["args"], []any{"--end-benchmarks=30s", "--watch-namespaces=team-a"}) {
					t.Errorf("the hook runs as %v with %v", spec["serviceAccountName"], c["args"])
				}
				if sc := c["securityContext"].(map[string]any); sc["readOnlyRootFilesystem"] != true || sc["allowPrivilegeEscalation"] != false {
					t.Errorf("the hook's securityContext %v", sc)
				}
				if d, _, _ := unstructured.NestedFieldNoCopy(job.Object, "spec", "activeDeadlineSeconds"); fmt.Sprint(d) != "150" {
					t.Errorf("activeDeadlineSeconds %d, want the wait and two minutes", d)
				}
			},
		},
		{
			name: "webhook off",
			set:  []string{"webhook.enabled=false"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				if find(objs, "ValidatingWebhookConfiguration", "") != nil || find(objs, "MutatingWebhookConfiguration", "") != nil ||
					find(objs, "ClusterRole", "tb-tunnelbench-webhook") != nil {
					t.Error("webhook objects rendered although it is off")
				}
				dep := &appsv1.Deployment{}
				convert(t, find(objs, "Deployment", ""), dep)
				if args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--webhook-port=0") {
					t.Errorf("args %s", args)
				}
			},
		},
		{
			name: "the history store, its retention passed to the operator",
			set:  []string{"history.enabled=true", "history.retention.maxPerSeries=400"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				dep := &appsv1.Deployment{}
				convert(t, find(objs, "Deployment", ""), dep)
				args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " ")
				for _, a := range []string{"--history-uri-file=", "--history-max-age=2160h", "--history-max-per-series=400"} {
					if !strings.Contains(args, a) {
						t.Errorf("args lack %s: %s", a, args)
					}
				}
			},
		},
		{
			name: "metrics off",
			set:  []string{"metrics.enabled=false"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				if find(objs, "Service", "tb-tunnelbench-metrics") != nil || find(objs, "ClusterRole", "tb-tunnelbench-metrics-reader") != nil {
					t.Error("metrics objects rendered although metrics are off")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, render(t, tt.set...)) })
	}
}

func TestSchemaRejectsBadValues(t *testing.T) {
	needsHelm(t)
	tests := []struct {
		set, want string
	}{
		{"image.pullPolicy=Sometimes", "pullPolicy"},
		{"runner.waitTimeout=soon", "waitTimeout"},
		{"metrics.port=80", "port"},
		{"unknownKey=1", "unknownKey"},
		{"webhook.failurePolicy=Maybe", "failurePolicy"},
		{"uninstall.wait=2m", "wait"},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			_, err := helm(t, "template", "tb", chartDir, "--set", tt.set)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("helm template --set %s: %v, want an error naming %s", tt.set, err, tt.want)
			}
		})
	}
}

// TestClusterWideRightsAreTheDocumentedOnes: what the chart grants the operator beyond the
// namespaces it works in (ClusterRoles bound to its ServiceAccount, other than the generated
// rules of namespaced resources, which watchNamespaces turns into Roles) is exactly the list of
// docs/operations/security.md's "Cluster-wide rights" table, in both modes.
func TestClusterWideRightsAreTheDocumentedOnes(t *testing.T) {
	needsHelm(t)
	documented := documentedClusterWideRights(t)
	for _, set := range [][]string{nil, {"watchNamespaces={team-a}"}} {
		objs := render(t, set...)
		roles := map[string]*rbacv1.ClusterRole{}
		for _, o := range objs {
			if o.GetKind() == "ClusterRole" {
				r := &rbacv1.ClusterRole{}
				convert(t, o, r)
				roles[r.Name] = r
			}
		}
		var got []string
		for _, o := range objs {
			if o.GetKind() != "ClusterRoleBinding" {
				continue
			}
			b := &rbacv1.ClusterRoleBinding{}
			convert(t, o, b)
			if len(b.Subjects) != 1 || b.Subjects[0].Name != "tb-tunnelbench" {
				continue
			}
			for _, rule := range roles[b.RoleRef.Name].Rules {
				if strings.HasSuffix(b.RoleRef.Name, "-manager") {
					// Its namespaced resources are Roles with watchNamespaces; nodes is cluster-scoped.
					if !slices.Contains(rule.Resources, "nodes") {
						continue
					}
					rule.Resources = []string{"nodes"}
				}
				got = append(got, ruleString(rule))
			}
		}
		slices.Sort(got)
		got = slices.Compact(got)
		want := documented
		if set != nil {
			// The manager's ClusterRole, nodes included, is not rendered in namespace-scoped mode.
			want = slices.DeleteFunc(slices.Clone(documented), func(s string) bool { return strings.HasPrefix(s, "/nodes") })
		}
		if !slices.Equal(got, want) {
			t.Errorf("values %v: cluster-wide rights\n  %s\ndocs/operations/security.md documents\n  %s", set,
				strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}

// ruleString writes a rule as docs/operations/security.md's table does: group/resource[name]: verbs.
func ruleString(r rbacv1.PolicyRule) string {
	names := ""
	if len(r.ResourceNames) > 0 {
		names = "[" + strings.ReplaceAll(strings.Join(r.ResourceNames, ","), "tb-tunnelbench-tunnelbench-system",
			"<fullname>-<namespace>") + "]"
	}
	return fmt.Sprintf("%s/%s%s: %s", strings.Join(r.APIGroups, ","), strings.Join(r.Resources, ","), names,
		strings.Join(r.Verbs, ", "))
}

// documentedClusterWideRights reads the first column of docs/operations/security.md's
// "Cluster-wide rights" table.
func documentedClusterWideRights(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "#### Cluster-wide rights")
	if !ok {
		t.Fatal(`docs/operations/security.md has no "Cluster-wide rights" section`)
	}
	var out []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		if cell, ok := strings.CutPrefix(line, "| `"); ok {
			rule, _, _ := strings.Cut(cell, "`")
			out = append(out, rule)
		}
	}
	slices.Sort(out)
	return out
}

// TestNodeReader: the node reader reads the node's cgroups and /proc read-only, with no token and
// no privilege beyond those mounts, only runner pods may reach it, the operator is told where it is,
// and the operator's Deployment does not select its pods. Off, none of it renders.
func TestNodeReader(t *testing.T) {
	needsHelm(t)
	objs := render(t)
	ds := &appsv1.DaemonSet{}
	convert(t, find(objs, "DaemonSet", "tb-tunnelbench-node-reader"), ds)
	pod := ds.Spec.Template.Spec
	c := pod.Containers[0]
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken || !*pod.SecurityContext.RunAsNonRoot ||
		*c.SecurityContext.AllowPrivilegeEscalation || !*c.SecurityContext.ReadOnlyRootFilesystem ||
		c.SecurityContext.Capabilities.Drop[0] != "ALL" || c.SecurityContext.Privileged != nil {
		t.Errorf("the node reader's pod holds more than its mount: %+v %+v", pod.SecurityContext, c.SecurityContext)
	}
	// The node's cgroups and /proc, read-only, and nothing else: not the host's PID namespace.
	var hostPaths []string
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			hostPaths = append(hostPaths, v.HostPath.Path)
		}
	}
	readOnly := len(c.VolumeMounts) == 2
	for _, m := range c.VolumeMounts {
		readOnly = readOnly && m.ReadOnly
	}
	if !slices.Equal(hostPaths, []string{"/sys/fs/cgroup", "/proc"}) || len(pod.Volumes) != 2 || !readOnly ||
		pod.HostPID || pod.HostNetwork {
		t.Errorf("volumes %+v, mounts %+v, hostPID %v: want /sys/fs/cgroup and /proc read-only only", pod.Volumes, c.VolumeMounts,
			pod.HostPID)
	}
	dep := &appsv1.Deployment{}
	convert(t, find(objs, "Deployment", "tb-tunnelbench"), dep)
	if sel, _ := metav1.LabelSelectorAsSelector(dep.Spec.Selector); sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
		t.Error("the operator's Deployment selects the node reader's pods")
	}
	args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " ")
	readerSel := "app.kubernetes.io/name=tunnelbench,app.kubernetes.io/instance=tb,app.kubernetes.io/component=node-reader"
	if !strings.Contains(args, "--node-reader-namespace=tunnelbench-system") || !strings.Contains(args, "--node-reader-selector="+readerSel) {
		t.Errorf("the operator is not told where the readers are: %s", args)
	}
	if sel, _ := labels.Parse(readerSel); !sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
		t.Errorf("the operator's selector %s does not select the readers %v", readerSel, ds.Spec.Template.Labels)
	}
	np := &networkingv1.NetworkPolicy{}
	convert(t, find(objs, "NetworkPolicy", "tb-tunnelbench-node-reader"), np)
	from := np.Spec.Ingress[0].From[0]
	if len(np.Spec.Ingress) != 1 || from.PodSelector.MatchLabels["app.kubernetes.io/component"] != "runner" ||
		np.Spec.Ingress[0].Ports[0].Port.IntValue() != 14700 {
		t.Errorf("the reader's NetworkPolicy admits %+v", np.Spec.Ingress)
	}
	off := render(t, "nodeReader.enabled=false")
	if find(off, "DaemonSet", "") != nil || strings.Contains(strings.Join(deploymentArgs(t, off), " "), "node-reader") {
		t.Error("a node reader renders with nodeReader.enabled=false")
	}
}

func deploymentArgs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	dep := &appsv1.Deployment{}
	convert(t, find(objs, "Deployment", "tb-tunnelbench"), dep)
	return dep.Spec.Template.Spec.Containers[0].Args
}

// firstWebhook is the kind's webhook configuration named with the release's namespace: its
// webhooks, the first of them and that one's Service.
func firstWebhook(t *testing.T, objs []*unstructured.Unstructured, kind string) ([]any, map[string]any, map[string]string) {
	t.Helper()
	cfg := find(objs, kind, "tb-tunnelbench-tunnelbench-system")
	if cfg == nil {
		t.Fatalf("no %s named with the release's namespace", kind)
	}
	hooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
	hook := hooks[0].(map[string]any)
	svc, _, _ := unstructured.NestedStringMap(hook, "clientConfig", "service")
	return hooks, hook, svc
}
