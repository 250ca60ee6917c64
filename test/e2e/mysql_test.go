//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

// mysqlDirectAndTLS benchmarks a real MariaDB (the fixture's, from the project's own image) with
// sysbench through a plain path and MySQL's own TLS, verified against the server's CA, with the
// client certificate sysbench 1.0.20 always presents: the engine seam end to end, from the
// initialization to the figures, their intervals and the cost of each part.
func mysqlDirectAndTLS(t *testing.T) {
	ns := newNamespace(t, "mysql")
	db, err := fixture.DeployMariaDB(ctx, k8s, ns, env(t, "E2E_MARIADB_IMAGE"), 3*time.Minute)
	if err != nil {
		dump(t, ns)
		t.Fatal(err)
	}
	tb := &benchv1.TunnelBenchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mariadb-direct-vs-tls"},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server: benchv1.ServerSpec{Engine: benchv1.EngineMySQL, External: &benchv1.ExternalServer{
				// No port: the engine's own, 3306.
				Host: db.Host, Database: "app",
				CredentialsSecret: benchv1.LocalObjectReference{Name: fixture.MariaDBCredentialsSecret},
				CASecret:          &benchv1.LocalObjectReference{Name: fixture.MariaDBCASecret},
			}},
			Transports: []benchv1.TransportSpec{
				{Name: "direct", Type: benchv1.TransportDirect},
				{Name: "tls", Type: benchv1.TransportTLS, TLS: &benchv1.TLSTransport{
					ClientCertSecret: &benchv1.LocalObjectReference{Name: fixture.MariaDBClientSecret}}},
			},
			Load: benchv1.LoadSpec{
				Builtin: "oltp_point_select", Clients: 2, Scale: 1, Initialize: true,
				Duration: &metav1.Duration{Duration: 5 * time.Second}, ProgressInterval: &metav1.Duration{Duration: time.Second},
				Repetitions: 3, Warmup: &metav1.Duration{Duration: time.Second},
			},
			Runner: &benchv1.RunnerSpec{Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("200m")}}},
			Timeout: &metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	end := complete(t, tb, 6*time.Minute)
	if !strings.Contains(end.Status.ServerVersion, "MariaDB") || !strings.HasSuffix(end.Status.Server, ":3306/app") {
		t.Errorf("server %q, version %q", end.Status.Server, end.Status.ServerVersion)
	}
	for _, tr := range tb.Spec.Transports {
		r := end.Status.Result(tr.Name)
		if r == nil || len(r.Runs) != 3 || r.TPS <= 0 || r.Transactions <= 0 || r.LatencyAvgMs <= 0 {
			t.Fatalf("%s: result %+v", tr.Name, r)
		}
		if p := r.Provenance; p == nil || !strings.HasPrefix(p.PgbenchVersion, "sysbench 1.") {
			t.Errorf("%s: provenance %+v", tr.Name, r.Provenance)
		}
		wantTLS := tr.Type == benchv1.TransportTLS
		if wantTLS != (r.TLS != nil) || wantTLS && !strings.HasPrefix(r.TLS.Version, "TLSv1.") {
			t.Errorf("%s: the server reported TLS %+v", tr.Name, r.TLS)
		}
		run := r.Runs[0]
		if len(run.Cost) == 0 || run.Cost[0].Part != benchv1.PartClient || run.Cost[0].CPUMicrosPerTransaction == nil {
			t.Errorf("%s: cost %+v", tr.Name, run.Cost)
		}
		if server := partOf(run, benchv1.PartServer); server == nil || server.CPUMicrosPerTransaction == nil {
			t.Errorf("%s: the server's cost %+v", tr.Name, server)
		}
		t.Logf("%s: %.0f tps, %.3f ms, comparison %+v, tls %+v, limiter %+v, cost %s", tr.Name, r.TPS, r.LatencyAvgMs,
			r.Comparison, r.TLS, run.Limiter, costText(run.Cost))
	}
	if c := end.Status.Result("tls").Comparison; c == nil {
		t.Errorf("tls has no comparison with direct")
	}
}

func costText(cost []benchv1.PartCost) string {
	var parts []string
	for _, c := range cost {
		if c.CPUMicrosPerTransaction != nil {
			parts = append(parts, fmt.Sprintf("%s %.1f µs/tx", c.Part, *c.CPUMicrosPerTransaction))
		}
	}
	return strings.Join(parts, ", ")
}
