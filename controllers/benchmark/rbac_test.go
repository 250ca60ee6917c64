package benchmark

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func operatorRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(b, role); err != nil {
		t.Fatal(err)
	}
	return role
}

// TestOperatorRoleIsLeastPrivilege reads the generated role: no wildcard, no way to read Secrets
// in bulk (list, watch), no privilege escalation, and only namespaced resources, so that the same
// rules work as a Role in namespace-scoped mode — but for listing nodes, read-only, to tell a pod
// that waits for CPU from one that fits no node (in namespace-scoped mode a Role cannot grant it,
// and the bounded wait applies).
func TestOperatorRoleIsLeastPrivilege(t *testing.T) {
	clusterScoped := []string{"namespaces", "persistentvolumes", "clusterroles", "clusterrolebindings",
		"customresourcedefinitions", "priorityclasses", "storageclasses"}
	for _, rule := range operatorRole(t).Rules {
		for _, field := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.ResourceNames} {
			if slices.Contains(field, "*") {
				t.Errorf("a wildcard in %+v", rule)
			}
		}
		for _, verb := range []string{"escalate", "bind", "impersonate", "deletecollection"} {
			if slices.Contains(rule.Verbs, verb) {
				t.Errorf("%s in %+v", verb, rule)
			}
		}
		for _, r := range rule.Resources {
			if slices.Contains(clusterScoped, r) {
				t.Errorf("the cluster-scoped %s in %+v", r, rule)
			}
			if r == "nodes" && !slices.Equal(rule.Verbs, []string{"list"}) {
				t.Errorf("nodes may only be listed: %+v", rule)
			}
			if r == "secrets" && (slices.Contains(rule.Verbs, "list") || slices.Contains(rule.Verbs, "watch")) {
				t.Errorf("Secrets may be read in bulk: %+v", rule)
			}
		}
	}
}

// TestNamespaceScopedOperator: an operator told to watch one namespace, holding the generated rules
// as a Role there and nothing cluster-wide, runs that namespace's benchmarks, ignores the others,
// and caches only the Jobs it made.
func TestNamespaceScopedOperator(t *testing.T) {
	needsEnvtest(t)
	ctx := context.Background()
	watched, other := newNamespace(t), newNamespace(t)
	const user = "system:serviceaccount:tunnelbench-system:scoped"
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: watched, Name: "tunnelbench-manager"}, Rules: operatorRole(t).Rules}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: watched, Name: "tunnelbench-manager"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	// The chart binds the Role of the servers' Leases, in its own namespace, in every mode.
	locks := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: lockNamespace, Name: "scoped-server-locks"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "manager-server-locks"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	for _, o := range []client.Object{role, binding, locks} {
		if err := testClient.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(testCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	scoped, err := client.New(cfg, client.Options{Scheme: testScheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := scoped.List(ctx, &corev1.PodList{}, client.InNamespace(other)); !apierrors.IsForbidden(err) {
		t.Fatalf("the scoped identity lists pods in another namespace: %v", err)
	}

	createCNPGSecrets(t, watched)
	createCNPGSecrets(t, other)
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: watched, Name: "someone-elses"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}}
	if err := testClient.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	op := startOperatorAs(t, user, []string{watched})
	mine, ignored := newBenchmark(watched, "scoped"), newBenchmark(other, "unwatched")
	for _, tb := range []*benchv1.TunnelBenchmark{mine, ignored} {
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
	}
	job := waitForJob(t, watched, jobName(mine.Name, "direct"))
	eventually(t, 10*time.Second, "the benchmark's Job in the operator's cache", func() error {
		jobs := &batchv1.JobList{}
		if err := op.cache.List(ctx, jobs, client.InNamespace(watched)); err != nil {
			return err
		}
		for _, j := range jobs.Items {
			if j.Name == foreign.Name {
				t.Fatalf("the cache holds a Job the operator did not make")
			}
		}
		if len(jobs.Items) != 1 || jobs.Items[0].Name != job.Name {
			return errorf("%d Jobs cached", len(jobs.Items))
		}
		return nil
	})
	finishJob(t, job, 0, resultReport(500, nil))
	waitForPhase(t, watched, mine.Name, benchv1.PhaseCompleted)
	if got := getBenchmark(t, other, ignored.Name); got.Status.Phase != "" {
		t.Errorf("a benchmark of an unwatched namespace was handled: %s", got.Status.Phase)
	}
}
