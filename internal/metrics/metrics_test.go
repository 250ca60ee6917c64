package metrics

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func TestConnectionCostSeries(t *testing.T) {
	r := NewRecorder(prometheus.NewRegistry())
	perSecond := 171.0
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
	tb.Status.Results = []benchv1.TransportResult{{Transport: "sidecar", TPS: 171, ConnectionsPerSecond: &perSecond,
		ConnectionStorm: &benchv1.ConnectionStormResult{Connections: 300, ConnectionsPerSecond: 2960, MeanConnectionMs: 0.338}}}
	r.Observe(tb)
	cases := []struct {
		name  string
		gauge *prometheus.GaugeVec
		want  float64
	}{
		{"connections/s", r.connections, 171},
		{"storm connections/s", r.stormRate, 2960},
		{"storm cycle seconds", r.stormCycle, 0.000338},
	}
	for _, c := range cases {
		if got := testutil.ToFloat64(c.gauge.WithLabelValues("ns", "b", "sidecar")); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	r.Forget("ns", "b")
	if n := testutil.CollectAndCount(r.stormRate); n != 0 {
		t.Errorf("%d storm series left after Forget", n)
	}
}
