//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/test/events"
	"github.com/tunnelbench/tunnelbench/test/fixture"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

// cnpgBenchmark compares direct, TLS verified against CloudNativePG's CA, and a pooler (a
// CloudNativePG Pooler) against a CloudNativePG server.
func cnpgBenchmark(ns, name string, server benchv1.ServerSpec) *benchv1.TunnelBenchmark {
	return &benchv1.TunnelBenchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server: server,
			Transports: []benchv1.TransportSpec{
				{Name: "direct", Type: benchv1.TransportDirect},
				{Name: "tls", Type: benchv1.TransportTLS},
				{Name: "pooler", Type: benchv1.TransportPooler},
			},
			Load: benchv1.LoadSpec{Builtin: "select-only", Protocol: "prepared", Clients: 2, Threads: 1, Scale: 1,
				Initialize: true, Duration: &metav1.Duration{Duration: 5 * time.Second},
				// The path is under test here, not the figures: one short run per transport.
				Repetitions: 1, Warmup: &metav1.Duration{}},
			Timeout: &metav1.Duration{Duration: 12 * time.Minute},
		},
	}
}

// assertCNPGResults checks a completed benchmark against a CloudNativePG server.
func assertCNPGResults(t *testing.T, end *benchv1.TunnelBenchmark) {
	t.Helper()
	if end.Status.Phase != benchv1.PhaseCompleted {
		t.Fatalf("phase %s, conditions %+v", end.Status.Phase, end.Status.Conditions)
	}
	if !strings.HasPrefix(end.Status.ServerVersion, "15.") {
		t.Errorf("server version %q", end.Status.ServerVersion)
	}
	for _, r := range end.Status.Results {
		t.Logf("%s: %.0f tps, %.3f ms, tls %+v", r.Transport, r.TPS, r.LatencyAvgMs, r.TLS)
		if p := r.Pooler; p != nil {
			t.Logf("%s: %s, client hop %+v, server hop %+v, the pooler counted %v transactions over %v server connections",
				r.Transport, p.Implementation, p.ClientHop, p.ServerHop, ptrVal(p.Transactions), ptrVal(p.ServerConnections))
		}
		if r.TPS <= 0 {
			t.Errorf("%s: tps %v", r.Transport, r.TPS)
		}
	}
	if r := end.Status.Result("tls"); r == nil || r.TLS == nil || !strings.HasPrefix(r.TLS.Version, "TLSv1.") ||
		!strings.Contains(r.Connection, "sslmode=verify-full") {
		t.Errorf("tls result %+v", r)
	}
	r := end.Status.Result("pooler")
	if r == nil || r.Pooler == nil || r.Pooler.Implementation != "CloudNativePG Pooler" ||
		!strings.HasPrefix(r.Pooler.ServerHop.TLS, "TLSv1.") {
		t.Fatalf("pooler result %+v", r)
	}
	// The evidence, from the Pooler pods' exporters: every transaction pgbench counted went
	// through CloudNativePG's PgBouncer.
	// The pooler's counters are the latest run's.
	latest := r.Runs[len(r.Runs)-1]
	if p := r.Pooler; p.Transactions == nil || *p.Transactions < latest.Transactions || p.ServerConnections == nil ||
		*p.ServerConnections < 1 {
		t.Errorf("the pooler counted %v transactions over %v server connections; pgbench %d in its latest run",
			ptrVal(p.Transactions), ptrVal(p.ServerConnections), latest.Transactions)
	}
	// CloudNativePG's PgBouncer pod, read through its node's reader as the server's is; the
	// primary's, in every transport.
	assertSidecarCost(t, *r, "pooler")
	for _, res := range end.Status.Results {
		assertSidecarCost(t, res, benchv1.PartServer)
	}
}

// cloudNativePG benchmarks a managed cluster (created, awaited and deleted by the operator), then
// an existing cluster created by the test, with the real CloudNativePG operator.
func cloudNativePG(t *testing.T) {
	ns := newNamespace(t, "cnpg")
	t.Run("a managed cluster over direct, TLS verify-full and a CloudNativePG Pooler", func(t *testing.T) {
		tb := cnpgBenchmark(ns, "managed", benchv1.ServerSpec{Managed: &benchv1.ManagedServer{Instances: 1}})
		if err := fixture.CreateBenchmark(ctx, k8s, tb); err != nil {
			t.Fatal(err)
		}
		end := waitForEnd(t, ns, tb.Name, 12*time.Minute)
		assertCNPGResults(t, end)
		events.Wait(t, k8s, ns, tb.Name, 30*time.Second, "ClusterCreated", "PoolerCreated", "Completed")
		poll.Until(t, 2*time.Minute, time.Second, "the managed Cluster deleted", func() error {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: end.Status.ManagedCluster}, cluster()); err == nil {
				return fmt.Errorf("Cluster %s still exists", end.Status.ManagedCluster)
			}
			return nil
		})
	})
	t.Run("an existing cluster", func(t *testing.T) {
		c := cluster()
		c.SetNamespace(ns)
		c.SetName("existing")
		c.Object["spec"] = map[string]any{"instances": int64(1), "storage": map[string]any{"size": "1Gi"},
			"imageName": env(t, "E2E_POSTGRES_IMAGE")}
		if err := k8s.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		// Created at once: the operator waits for the Cluster to be ready.
		tb := cnpgBenchmark(ns, "existing", benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "existing"}})
		tb.Spec.Transports = tb.Spec.Transports[:2]
		if err := fixture.CreateBenchmark(ctx, k8s, tb); err != nil {
			t.Fatal(err)
		}
		end := waitForEnd(t, ns, tb.Name, 10*time.Minute)
		if end.Status.Phase != benchv1.PhaseCompleted || !strings.HasPrefix(end.Status.ServerVersion, "15.") {
			t.Fatalf("phase %s, version %q, conditions %+v", end.Status.Phase, end.Status.ServerVersion, end.Status.Conditions)
		}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "existing"}, cluster()); err != nil {
			t.Errorf("the existing Cluster must stay: %v", err)
		}
		// The primary's pod, read through its node's reader, in every run of every transport.
		for _, r := range end.Status.Results {
			assertSidecarCost(t, r, benchv1.PartServer)
		}
	})
	t.Run("its primary killed by chaos-mesh mid-run", func(t *testing.T) {
		tb := cnpgBenchmark(ns, "primary-killed", benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "existing"}})
		fc := faultCase{name: "CloudNativePG primary pod killed", transports: tb.Spec.Transports[:1],
			chaos: func(ns, _ string) *unstructured.Unstructured {
				return podKill(ns, map[string]string{"cnpg.io/cluster": "existing", "cnpg.io/instanceRole": "primary"})
			},
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonConnectionLost},
			wantText: "CloudNativePG Cluster existing"}
		tb.Spec.Transports = fc.transports
		row := injectFault(t, tb, fc)
		t.Logf("| %s | %s | %s | %.0f |", row.fault, row.phase, row.reason, row.seconds)
	})
}

func cluster() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(specs.CNPGClusterGVK)
	return u
}
