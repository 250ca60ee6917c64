package summary

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func TestOf(t *testing.T) {
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"},
		Spec: benchv1.TunnelBenchmarkSpec{
			Transports: []benchv1.TransportSpec{{Name: "direct", Type: "direct"}, {Name: "ssh", Type: "ssh"}},
			Load:       benchv1.LoadSpec{Builtin: "select-only", Clients: 4, Repetitions: 6},
		},
		Status: benchv1.TunnelBenchmarkStatus{Phase: benchv1.PhaseRunning, Progress: "7/12"},
	}
	runs := func(tps ...float64) []benchv1.RunResult {
		var out []benchv1.RunResult
		for i, x := range tps {
			out = append(out, benchv1.RunResult{Round: int32(i + 1), TPS: x})
		}
		return out
	}
	tb.Status.Results = []benchv1.TransportResult{{Transport: "direct", Type: "direct", Runs: runs(100, 90, 110, 95, 105, 120)},
		{Transport: "ssh", Type: "ssh", Runs: runs(50)}}
	s := Of(tb)
	if !s.Partial || s.Unit != "tps" || s.Baseline != "direct" || len(s.Transports) != 2 {
		t.Fatalf("summary %+v", s)
	}
	d := s.Transports[0]
	// Six runs: the median is 102.5, and the 95 % interval of the median is the min–max (96.9 %).
	if d.Runs != 6 || d.Median != 102.5 || d.Low != 90 || d.High != 120 || d.IntervalConfidence < 0.95 {
		t.Errorf("direct %+v", d)
	}
	// One run bounds nothing.
	if ssh := s.Transports[1]; ssh.Runs != 1 || ssh.Median != 50 || ssh.IntervalConfidence != 0 {
		t.Errorf("ssh %+v", ssh)
	}

	tb.Spec.Load = benchv1.LoadSpec{Copy: &benchv1.CopyLoad{Size: resource.MustParse("16Mi"), Data: benchv1.CopyText}, Repetitions: 1}
	tb.Status.Results[0].Runs = []benchv1.RunResult{{Round: 1, MBPerSecond: ptr.To(6.2)}}
	tb.Status.Phase = benchv1.PhaseCompleted
	s = Of(tb)
	if s.Unit != "MB/s" || s.Partial || s.Transports[0].Median != 6.2 {
		t.Errorf("copy summary %+v", s)
	}
}

// TestConnectionCostOf: one new connection's cost comes from the best measurement the load made,
// and never from pgbench's initial connection time (every client's start-up).
func TestConnectionCostOf(t *testing.T) {
	reconnect := &Estimate{Median: 9.65, Low: 9.41, High: 11.7, IntervalConfidence: 0.75, Runs: 3}
	storm := &Estimate{Median: 17.2, Low: 16.5, High: 19.1, IntervalConfidence: 0.97, Runs: 6}
	setup := &Setup{Runs: 3, TotalMs: 5.14}
	for _, tc := range []struct {
		name      string
		reconnect *Estimate
		storm     *Estimate
		setup     *Setup
		want      float64
		from      string
	}{
		{"reconnect first", reconnect, storm, setup, 9.65, CostFromReconnect},
		{"then the storm", nil, storm, setup, 17.2, CostFromStorm},
		{"then the setup probe", nil, nil, setup, 5.14, CostFromSetupProbe},
		{"a probe that measured nothing", nil, nil, &Setup{Runs: 1}, 0, ""},
		{"nothing measured", nil, nil, nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, from := ConnectionCostOf(tc.reconnect, tc.storm, tc.setup)
			if from != tc.from || (got == nil) != (tc.from == "") || (got != nil && got.Median != tc.want) {
				t.Errorf("got %+v from %q, want %.2f from %q", got, from, tc.want, tc.from)
			}
		})
	}
}
