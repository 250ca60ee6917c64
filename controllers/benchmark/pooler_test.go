package benchmark

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// TestPoolerTransportLifecycle: for a server given by host, the operator runs its own PgBouncer
// (TLS Secret, Service, Deployment), starts the Job only once it is available, records both hops
// and the pooler's evidence, and removes the pooler when the transport is done. For a
// CloudNativePG server it creates a CloudNativePG Pooler, accepted by CloudNativePG's own CRD. A
// sidecar pooler rides in the Job's pod.
func TestPoolerTransportLifecycle(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	createExternalSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()

	t.Run("own PgBouncer as a service", func(t *testing.T) {
		tb := newBenchmark(ns, "own", benchv1.TransportSpec{Name: "pool", Type: benchv1.TransportPooler,
			Pooler: &benchv1.PoolerTransport{ClientTLS: "require", ServerTLS: "verify-full"}})
		useExternalServer(tb)
		tb.Spec.Load.Reconnect = true
		tb.Spec.Load.ConnectionStorm = &benchv1.ConnectionStorm{Connections: 100}
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
		key := types.NamespacedName{Namespace: ns, Name: tb.PoolerName("pool")}
		dep, secret, svc := &appsv1.Deployment{}, &corev1.Secret{}, &corev1.Service{}
		eventually(t, 15*time.Second, "the pooler's objects", func() error {
			for _, o := range []client.Object{dep, secret, svc} {
				if err := testClient.Get(ctx, key, o); err != nil {
					return err
				}
			}
			return nil
		})
		for _, o := range []metav1.Object{dep, secret, svc} {
			if ref := metav1.GetControllerOf(o); ref == nil || ref.Name != "own" {
				t.Errorf("%s is not owned by the benchmark: %+v", o.GetName(), ref)
			}
		}
		args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " ")
		for _, want := range []string{"--server=db.example:5432", "--client-auth=scram-sha-256", "--server-tls=verify-full",
			"--client-tls-cert="} {
			if !strings.Contains(args, want) {
				t.Errorf("pooler args %q lack %q", args, want)
			}
		}
		if secret.Type != corev1.SecretTypeTLS || len(secret.Data["tls.crt"]) == 0 {
			t.Errorf("pooler TLS Secret %s with %d keys", secret.Type, len(secret.Data))
		}
		assertNoJobYet(t, ns, jobName(tb.Name, "pool"), "the pooler")
		markAvailable(t, dep)

		job := waitForJob(t, ns, jobName(tb.Name, "pool"))
		runnerArgs := job.Spec.Template.Spec.Containers[0].Args
		if !slices.Contains(runnerArgs, "--pooler=pgbouncer") || !slices.Contains(runnerArgs, "--storm=100") {
			t.Errorf("runner args %v", runnerArgs)
		}
		finishJob(t, job, 0, poolerReport(t, true))

		done := waitForPhase(t, ns, "own", benchv1.PhaseCompleted)
		res := done.Status.Result("pool")
		if res == nil || res.Pooler == nil {
			t.Fatalf("result %+v", res)
		}
		p := res.Pooler
		if p.Implementation != "PgBouncer" || p.Placement != "service" || p.ClientHop.Auth != "scram-sha-256" ||
			p.ClientHop.TLS != "TLSv1.3/TLS_AES_128_GCM_SHA256" || p.ServerHop.TLS != "TLSv1.3/TLS_AES_256_GCM_SHA384" ||
			p.Transactions == nil || *p.Transactions != 2500 || p.ServerConnections == nil || *p.ServerConnections != 3 {
			t.Errorf("pooler result %+v", p)
		}
		if res.ConnectionsPerSecond == nil || *res.ConnectionsPerSecond != 250 {
			t.Errorf("connections per second %v, want 250 (one per transaction)", res.ConnectionsPerSecond)
		}
		if s := res.ConnectionStorm; s == nil || s.Connections != 100 || s.ConnectionsPerSecond != 400 || s.TotalSeconds != 0.25 ||
			s.MeanConnectionMs != 2.5 || s.MeanConnectMs != 1.5 ||
			s.Connect == nil || s.Connect.Median != 1.5 || s.Connect.Low != 1.2 || s.Connect.High != 1.9 || s.Connect.Samples != 6 {
			t.Errorf("storm %+v", s)
		}
		assertEvents(t, ns, "own", "PoolerCreated")
		eventually(t, 10*time.Second, "the pooler removed", func() error {
			for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Secret{}, &corev1.Service{}} {
				if err := testClient.Get(ctx, key, o); err == nil && o.GetDeletionTimestamp().IsZero() {
					return errorf("%T still exists", o)
				}
			}
			return nil
		})
		if b, _ := json.Marshal(done.Status); strings.Contains(string(b), "PRIVATE KEY") {
			t.Error("key material in status")
		}
	})

	t.Run("CloudNativePG Pooler", func(t *testing.T) {
		tb := newBenchmark(ns, "cnpg", benchv1.TransportSpec{Name: "pool", Type: benchv1.TransportPooler,
			Pooler: &benchv1.PoolerTransport{PoolMode: "transaction", PoolSize: 2}})
		tb.Spec.Load.Protocol = "extended"
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
		pooler := &unstructured.Unstructured{}
		pooler.SetGroupVersionKind(specs.CNPGPoolerGVK)
		key := types.NamespacedName{Namespace: ns, Name: tb.PoolerName("pool")}
		eventually(t, 15*time.Second, "the CloudNativePG Pooler", func() error { return testClient.Get(ctx, key, pooler) })
		if mode, _, _ := unstructured.NestedString(pooler.Object, "spec", "pgbouncer", "poolMode"); mode != "transaction" {
			t.Errorf("Pooler poolMode %q", mode)
		}
		if ref := metav1.GetControllerOf(pooler); ref == nil || ref.Name != "cnpg" {
			t.Errorf("Pooler owner %+v", ref)
		}
		// Play CloudNativePG: it runs PgBouncer in a Deployment named like the Pooler.
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"cnpg.io/poolerName": key.Name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cnpg.io/poolerName": key.Name}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pgbouncer", Image: "pgbouncer"}}},
				},
			},
		}
		if err := testClient.Create(ctx, dep); err != nil {
			t.Fatal(err)
		}
		markAvailable(t, dep)
		job := waitForJob(t, ns, jobName(tb.Name, "pool"))
		env := map[string]string{}
		for _, e := range job.Spec.Template.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		args := job.Spec.Template.Spec.Containers[0].Args
		if env["PGHOST"] != tb.PoolerName("pool")+"."+ns+".svc" || env["PGPORT"] != "5432" || !slices.Contains(args, "--pooler=opaque") ||
			!slices.Contains(args, "--pooler-metrics="+tb.PoolerMetricsName("pool")+"."+ns+".svc:9127") {
			t.Errorf("runner reaches %s:%s with %v", env["PGHOST"], env["PGPORT"], args)
		}
		metrics := &corev1.Service{}
		metricsKey := types.NamespacedName{Namespace: ns, Name: tb.PoolerMetricsName("pool")}
		if err := testClient.Get(ctx, metricsKey, metrics); err != nil || metrics.Spec.ClusterIP != corev1.ClusterIPNone ||
			metrics.Spec.Selector["cnpg.io/poolerName"] != key.Name || metrics.Spec.Ports[0].Port != 9127 {
			t.Errorf("exporters' Service %+v (%v)", metrics.Spec, err)
		}
		finishJob(t, job, 0, poolerReport(t, false))
		done := waitForPhase(t, ns, "cnpg", benchv1.PhaseCompleted)
		if p := done.Status.Result("pool").Pooler; p == nil || p.Implementation != "CloudNativePG Pooler" || p.Transactions != nil {
			t.Errorf("pooler result %+v", p)
		}
		eventually(t, 10*time.Second, "the CloudNativePG Pooler removed", func() error {
			if err := testClient.Get(ctx, key, pooler); err == nil {
				return errorf("the Pooler still exists")
			}
			if err := testClient.Get(ctx, metricsKey, &corev1.Service{}); err == nil {
				return errorf("the exporters' Service still exists")
			}
			return nil
		})
	})

	t.Run("sidecar", func(t *testing.T) {
		tb := newBenchmark(ns, "side", benchv1.TransportSpec{Name: "pool", Type: benchv1.TransportPooler,
			Pooler: &benchv1.PoolerTransport{Placement: "sidecar"}})
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
		job := waitForJob(t, ns, jobName(tb.Name, "pool"))
		if sc := job.Spec.Template.Spec.InitContainers; len(sc) != 1 || sc[0].Name != "pgbouncer" {
			t.Fatalf("init containers %+v", sc)
		}
		if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: tb.PoolerName("pool")}, &appsv1.Deployment{}); err == nil {
			t.Error("a sidecar pooler got a Deployment")
		}
		finishJob(t, job, 0, poolerReport(t, true))
		done := waitForPhase(t, ns, "side", benchv1.PhaseCompleted)
		if p := done.Status.Result("pool").Pooler; p == nil || p.ClientHop.Auth != "trust" || p.Placement != "sidecar" {
			t.Errorf("pooler result %+v", p)
		}
	})
}

// markAvailable plays the Deployment controller.
func markAvailable(t *testing.T, dep *appsv1.Deployment) {
	t.Helper()
	dep.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1,
		ObservedGeneration: dep.Generation}
	if err := testClient.Status().Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
}

func poolerReport(t *testing.T, counted bool) string {
	t.Helper()
	incl := 250.0
	rep := report.Report{
		Result: &engine.Result{TPS: 250, TPSIncludingConnections: &incl, LatencyAvgMs: 16, ConnectionTimeMs: 3,
			Reconnect: true, Transactions: 2500, Clients: 4, Threads: 2},
		TLS:    &report.TLS{Version: "TLSv1.3", Cipher: "TLS_AES_256_GCM_SHA384"},
		Pooler: &report.Pooler{ClientTLS: &report.TLS{Version: "TLSv1.3", Cipher: "TLS_AES_128_GCM_SHA256"}},
		Storm: &report.Storm{Connections: 100, PerSecond: 400, MeanConnectMs: 1.5, Command: "pgbench -n -C -t 100",
			BatchConnectMs: []float64{1.4, 1.2, 1.6, 1.9, 1.5, 1.5}},
		Command: "pgbench -b select-only -C -c 4 -j 2 -T 10",
	}
	if counted {
		rep.Pooler.Counted, rep.Pooler.Transactions, rep.Pooler.ServerConnections = true, 2500, 3
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
