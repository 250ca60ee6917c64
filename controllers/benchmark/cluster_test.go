package benchmark

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

func managedServer(retain bool) benchv1.ServerSpec {
	return benchv1.ServerSpec{Managed: &benchv1.ManagedServer{Instances: 2, StorageClass: "local-path",
		Parameters: map[string]string{"max_connections": "200"}, Retain: retain}}
}

func getCluster(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	c := &unstructured.Unstructured{}
	c.SetGroupVersionKind(specs.CNPGClusterGVK)
	return c, testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, c)
}

// TestManagedServer: the operator creates a CloudNativePG Cluster (accepted by CloudNativePG's own
// CRD), reports it not ready while it bootstraps, runs the benchmark once it is, records the
// server's version, and deletes the Cluster at the end unless told to retain it.
func TestManagedServer(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	startOperator(t)
	ctx := context.Background()
	for _, retain := range []bool{false, true} {
		name := map[bool]string{false: "managed", true: "retained"}[retain]
		t.Run(name, func(t *testing.T) {
			tb := newBenchmark(ns, name)
			tb.Spec.Server = managedServer(retain)
			if err := testClient.Create(ctx, tb); err != nil {
				t.Fatal(err)
			}
			clusterName := name + "-pg"
			var cluster *unstructured.Unstructured
			eventually(t, 10*time.Second, "the managed Cluster", func() (err error) {
				cluster, err = getCluster(ctx, ns, clusterName)
				return err
			})
			if ref := metav1.GetControllerOf(cluster); ref == nil || ref.Name != name {
				t.Errorf("Cluster owner %+v", ref)
			}
			for path, want := range map[string]any{"spec.instances": int64(2), "spec.imageName": "tunnelbench/postgres:15-test",
				"spec.storage.storageClass": "local-path", "spec.storage.size": "1Gi",
				"spec.postgresql.parameters.max_connections": "200", "spec.bootstrap.initdb.database": "app"} {
				got, _, _ := unstructured.NestedFieldNoCopy(cluster.Object, strings.Split(path, ".")...)
				if got != want {
					t.Errorf("%s = %v, want %v", path, got, want)
				}
			}
			eventually(t, 10*time.Second, "ServerResolved False while the Cluster bootstraps", func() error {
				c := meta.FindStatusCondition(getBenchmark(t, ns, name).Status.Conditions, conditions.ServerResolved)
				if c == nil || c.Reason != conditions.ReasonClusterNotReady {
					return errorf("condition %+v", c)
				}
				return nil
			})
			// CloudNativePG writes the Secrets before the cluster is ready.
			createClusterSecrets(t, ns, clusterName)
			markClusterReady(t, cluster)
			job := waitForJob(t, ns, jobName(name, "direct"))
			rep := map[string]any{}
			_ = json.Unmarshal([]byte(resultReport(500, nil)), &rep)
			rep["serverVersion"] = "15.20 (Debian 15.20-0+deb12u1)"
			b, _ := json.Marshal(rep)
			finishJob(t, job, 0, string(b))
			done := waitForPhase(t, ns, name, benchv1.PhaseCompleted)
			if done.Status.ServerVersion != "15.20 (Debian 15.20-0+deb12u1)" || done.Status.ManagedCluster != clusterName ||
				done.Status.Server != clusterName+"-rw:5432/app" {
				t.Errorf("status server %q version %q cluster %q", done.Status.Server, done.Status.ServerVersion, done.Status.ManagedCluster)
			}
			if retain {
				consistently(t, 2*time.Second, "a retained Cluster stays", func() error {
					c, err := getCluster(ctx, ns, clusterName)
					if err != nil || !c.GetDeletionTimestamp().IsZero() {
						return errorf("the retained Cluster is gone or going: %v", err)
					}
					return nil
				})
				return
			}
			eventually(t, 10*time.Second, "the managed Cluster deleted", func() error {
				if _, err := getCluster(ctx, ns, clusterName); err == nil {
					return errorf("the Cluster still exists")
				}
				return nil
			})
			assertEvents(t, ns, name, "ClusterCreated", "ClusterDeleted")
		})
	}
}

// TestClusterNeverReady: a CloudNativePG Cluster that does not become ready fails the benchmark
// after the bounded wait, saying which cluster and in what state.
func TestClusterNeverReady(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	startOperator(t, func(r *TunnelBenchmarkReconciler) { r.ClusterWait = 4 * time.Second })
	tests := []struct {
		name, want string
		setup      func()
	}{
		{"missing", "CloudNativePG Cluster " + ns + "/pg not found", func() {}},
		{"bootstrapping", "is not ready (no status yet, 0/1 instances ready)", func() {
			c := &unstructured.Unstructured{Object: map[string]any{
				"spec": map[string]any{"instances": int64(1), "storage": map[string]any{"size": "1Gi"}}}}
			c.SetGroupVersionKind(specs.CNPGClusterGVK)
			c.SetNamespace(ns)
			c.SetName("pg")
			if err := testClient.Create(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			tb := newBenchmark(ns, tt.name)
			if err := testClient.Create(context.Background(), tb); err != nil {
				t.Fatal(err)
			}
			done := waitForPhase(t, ns, tt.name, benchv1.PhaseFailed)
			c := meta.FindStatusCondition(done.Status.Conditions, conditions.Failed)
			if c == nil || c.Reason != conditions.ReasonClusterNotReady || !strings.Contains(c.Message, tt.want) ||
				!strings.Contains(c.Message, "waited 4s") {
				t.Errorf("Failed condition %+v, want ClusterNotReady with %q", c, tt.want)
			}
		})
	}
}

// TestManagedVolumeTooSmall: a managed server whose volume cannot hold the data set the benchmark
// initializes fails at once with InvalidSpec, before a Cluster is made (CloudNativePG would create
// it and pgbench -i would fill the disk minutes later).
func TestManagedVolumeTooSmall(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	startOperator(t)
	tb := newBenchmark(ns, "small-volume")
	size := resource.MustParse("1Gi")
	tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{StorageSize: &size}}
	tb.Spec.Load.Initialize, tb.Spec.Load.Scale = true, 100
	if err := testClient.Create(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	done := waitForPhase(t, ns, tb.Name, benchv1.PhaseFailed)
	c := meta.FindStatusCondition(done.Status.Conditions, conditions.Failed)
	if c == nil || c.Reason != conditions.ReasonInvalidSpec ||
		!strings.Contains(c.Message, "storageSize 1Gi cannot hold spec.load.scale 100") {
		t.Errorf("Failed condition %+v, want InvalidSpec naming storageSize and scale", c)
	}
	if _, err := getCluster(context.Background(), ns, tb.ManagedClusterName()); err == nil {
		t.Error("a Cluster was created for a benchmark that cannot run")
	}
}
