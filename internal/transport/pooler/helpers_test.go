package pooler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/testing/transporttest"
	"github.com/tunnelbench/tunnelbench/internal/transport"

	// A path a pooler runs over in these tests, registered (vpn is imported by over_test.go).
	_ "github.com/tunnelbench/tunnelbench/internal/transport/ssh"
)

var (
	server   = transporttest.Server
	defaults = transporttest.Defaults
	env      = transporttest.Env
)

// benchmark is a benchmark of one direct transport, changed by mutate.
func benchmark(mutate func(*benchv1.TunnelBenchmark)) *benchv1.TunnelBenchmark {
	tb := transporttest.Benchmark(benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect})
	if mutate != nil {
		mutate(tb)
	}
	return tb
}

// build is the runner pod of tb's transport tr, as the reconciler builds its Job.
func build(t *testing.T, tb *benchv1.TunnelBenchmark, tr benchv1.TransportSpec) *corev1.PodSpec {
	t.Helper()
	job, _ := transporttest.Job(t, transport.Context{Benchmark: tb, Spec: tr, Server: server, Defaults: defaults})
	return &job.Spec.Template.Spec
}
