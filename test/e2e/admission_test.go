//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

// waitForWebhook waits until the API server reaches the operator's admission webhook: a
// server-side dry run of a benchmark is admitted.
func waitForWebhook(t *testing.T, ns string, pg *fixture.Postgres) {
	t.Helper()
	probe := benchmark(ns, "webhook-probe", pg, fixture.CredentialsSecret)
	poll.Until(t, 2*time.Minute, time.Second, "the admission webhook to answer", func() error {
		return k8s.Create(ctx, probe.DeepCopy(), client.DryRunAll)
	})
}

// webhookChecksTheCreator: in the real cluster, `kubectl apply` as a user who may create
// benchmarks but not read the server's Secret is refused naming the field, the user and the
// Secret; the same benchmark from a user who may read it is admitted; a chaos-mesh link into a
// namespace the user may not shape, a server of a namespace the user may not benchmark in, a
// database name that is a connection string and a runner image off the chart's list are refused.
func webhookChecksTheCreator(t *testing.T, ns string, pg *fixture.Postgres) {
	grant(t, ns, "e2e-bench-author", []string{"e2e-alice", "e2e-bob"}, rbacv1.PolicyRule{
		APIGroups: []string{benchv1.GroupVersion.Group}, Resources: []string{"tunnelbenchmarks"},
		Verbs: []string{"get", "create", "patch"}})
	grant(t, ns, "e2e-secret-reader", []string{"e2e-alice"}, rbacv1.PolicyRule{
		APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"},
		ResourceNames: []string{fixture.CredentialsSecret, fixture.CASecret}})
	victim := newNamespace(t, "e2e-victim")
	chaos := benchmark(ns, "chaos-into-victim", pg, fixture.CredentialsSecret)
	chaos.Spec.Server.External.Host = "pg." + victim + ".svc"
	chaos.Spec.Network = &benchv1.NetworkSpec{Emulator: benchv1.EmulatorChaosMesh, Bandwidth: "1Mbit"}
	// A user of one namespace naming another team's server: it would hold that server's place in
	// the queue (their runner pod left unschedulable) while the team's own benchmarks wait.
	hostage := benchmark(ns, "hold-victims-server", pg, fixture.CredentialsSecret)
	hostage.Spec.Server.External.Host = "pg." + victim + ".svc"
	// libpq reads a dbname holding "=" as a connection string: pgbench would go to another host.
	connString := benchmark(ns, "database-connection-string", pg, fixture.CredentialsSecret)
	connString.Spec.Server.External.Database = "host=127.0.0.1 port=1 dbname=app sslmode=disable"
	image := benchmark(ns, "foreign-image", pg, fixture.CredentialsSecret)
	image.Spec.Runner.Image = "registry.invalid/steal:1"
	tests := []struct {
		name    string
		tb      *benchv1.TunnelBenchmark
		as      []string
		refused []string
	}{
		{"a Secret the user may not get", benchmark(ns, "bob", pg, fixture.CredentialsSecret), []string{"--as=e2e-bob"},
			[]string{"spec.server.external.credentialsSecret", `user "e2e-bob" may not "get" on secrets ` + ns + "/" + fixture.CredentialsSecret}},
		{"the Secrets the user may get", benchmark(ns, "alice", pg, fixture.CredentialsSecret), []string{"--as=e2e-alice"}, nil},
		{"a chaos-mesh link into a namespace the user may not shape", chaos, []string{"--as=e2e-alice"},
			[]string{"spec.network", `"create" on networkchaos.chaos-mesh.org in namespace ` + victim}},
		{"another namespace's server", hostage, []string{"--as=e2e-alice"},
			[]string{"spec.server.external.host", `"create" on tunnelbenchmarks.bench.tunnelbench.io in namespace ` + victim}},
		{"a database name that is a connection string, even for an administrator", connString, nil,
			[]string{"spec.server.external.database", "not a connection string or URI"}},
		{"a runner image off the chart's list, even for an administrator", image, nil,
			[]string{"spec.runner.image", "runner.allowedImages"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := kubectlApplyAs(t, tt.tb, append(tt.as, "--dry-run=server")...)
			if tt.refused == nil {
				if err != nil {
					t.Errorf("refused: %v\n%s", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("admitted:\n%s", out)
			}
			for _, want := range tt.refused {
				if !strings.Contains(out, want) {
					t.Errorf("the refusal does not say %q:\n%s", want, out)
				}
			}
		})
	}
}

// grant gives users a Role of rule in ns.
func grant(t *testing.T, ns, name string, users []string, rule rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: []rbacv1.PolicyRule{rule}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}
	for _, u := range users {
		binding.Subjects = append(binding.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	for _, o := range []client.Object{role, binding} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// kubectlApplyAs applies tb with kubectl and extra arguments (--as, --dry-run).
func kubectlApplyAs(t *testing.T, tb *benchv1.TunnelBenchmark, args ...string) (string, error) {
	t.Helper()
	b, err := yaml.Marshal(tb)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("kubectl", append([]string{"apply", "-f", "-"}, args...)...)
	cmd.Stdin = strings.NewReader(fmt.Sprintf("apiVersion: %s\nkind: TunnelBenchmark\n%s", benchv1.GroupVersion, b))
	out, err := cmd.CombinedOutput()
	return string(out), err
}
