package main

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func TestProgress(t *testing.T) {
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
		Spec: benchv1.TunnelBenchmarkSpec{Transports: []benchv1.TransportSpec{{Name: "direct"}, {Name: "tls"}},
			Load: benchv1.LoadSpec{Repetitions: 2}},
		Status: benchv1.TunnelBenchmarkStatus{Phase: benchv1.PhaseRunning, Progress: "1/4",
			Results: []benchv1.TransportResult{{Transport: "direct", Runs: []benchv1.RunResult{{Round: 1, TPS: 1500}}}},
			Live: &benchv1.LiveRun{Transport: "tls", Round: 1, Repetitions: 2, Phase: "load", ElapsedSeconds: 5,
				DurationSeconds: 10, TPS: 1234, LatencyMs: 3.2}}}
	got := progress(tb)
	for _, want := range []string{"Running (1/4 runs)", "direct               [############............] 1/2  last run 1500 tps",
		"tls                  [........................] 0/2  round 1: load 5/10 s, 1234 tps, 3.200 ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress lacks %q:\n%s", want, got)
		}
	}
}
