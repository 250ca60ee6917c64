// Package benchfixture holds the TunnelBenchmark the tests start from: one valid benchmark that
// each test changes in the one way it is about.
package benchfixture

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// New is a valid benchmark against the CloudNativePG cluster "pg": select-only from 4 clients for
// 10 s, one run per transport (tests about repetitions set their own), direct when no transport is
// given.
func New(ns, name string, transports ...benchv1.TransportSpec) *benchv1.TunnelBenchmark {
	if len(transports) == 0 {
		transports = []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}
	}
	return &benchv1.TunnelBenchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server:     benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "pg"}},
			Transports: transports,
			Load: benchv1.LoadSpec{
				Builtin: "select-only", Clients: 4, Threads: 2, Protocol: "prepared",
				Duration:    &metav1.Duration{Duration: 10 * time.Second},
				Repetitions: 1,
			},
		},
	}
}

// Histogram is the encoded latency histogram of a pgbench transaction log of n transactions, the
// i-th (from 1) taking micros(i) µs, read as the runner reads real logs.
func Histogram(t testing.TB, n int, micros func(i int) int64) (string, int64) {
	t.Helper()
	var log strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&log, "0 %d %d 0 1795487539 %d\n", i, micros(i), i%1_000_000)
	}
	rec := latency.NewRecorder()
	if err := rec.ReadLog(strings.NewReader(log.String())); err != nil {
		t.Fatal(err)
	}
	hist, err := rec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return hist, rec.Count()
}

// Progress is n progress reports, one a second, the i-th (from 0) at tps(i).
func Progress(n int, tps func(i int) float64) []engine.ProgressPoint {
	out := make([]engine.ProgressPoint, n)
	for i := range out {
		out[i] = engine.ProgressPoint{T: float64(i + 1), TPS: tps(i), LatencyMs: 1}
	}
	return out
}
