// Package transporttest builds a transport's objects as the reconciler builds them, for the tests
// of a transport in its own package (internal/transport/<type>): one benchmark, one server, the
// operator's defaults, and the runner Job around a transport's pod. internal/transport's own tests
// keep their copies of these few lines, since they cannot import a package that imports theirs.
package transporttest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// Server is a CloudNativePG-like server with credentials and a CA.
var Server = transport.Server{Host: "pg-rw", Port: 5432, Database: "app", CredentialsSecret: "pg-app",
	UsernameKey: "username", PasswordKey: "password", CASecret: "pg-ca", CAKey: "ca.crt"}

// Defaults are the operator's settings of the pods it runs.
var Defaults = specs.RunnerDefaults{Image: "runner:1", PullPolicy: corev1.PullIfNotPresent, WaitTimeout: time.Minute}

// Benchmark is benchmark bench in namespace db of these transports, on CloudNativePG cluster pg.
func Benchmark(transports ...benchv1.TransportSpec) *benchv1.TunnelBenchmark {
	return &benchv1.TunnelBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "db", UID: "uid-1"},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server:     benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "pg"}},
			Transports: transports,
			Load:       benchv1.LoadSpec{Builtin: "select-only", Clients: 4, Threads: 2},
		},
	}
}

// Context is what the reconciler builds tb's transport named name from, with NetworkPolicies.
func Context(t *testing.T, tb *benchv1.TunnelBenchmark, name string) transport.Context {
	t.Helper()
	for _, spec := range tb.Spec.Transports {
		if spec.Name == name {
			return transport.Context{Benchmark: tb, Spec: spec, Server: Server, Defaults: Defaults, NetworkPolicies: true}
		}
	}
	t.Fatalf("no transport %s", name)
	return transport.Context{}
}

// For is the transport of c.
func For(t *testing.T, c transport.Context) transport.Transport {
	t.Helper()
	tr, err := transport.For(c)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Of is the first transport of a benchmark of these transports.
func Of(t *testing.T, transports ...benchv1.TransportSpec) transport.Transport {
	t.Helper()
	return For(t, Context(t, Benchmark(transports...), transports[0].Name))
}

// Job is the runner Job of c's transport as the reconciler builds it: the transport's pod and its
// part of the runner's contract, which the runner must accept.
func Job(t *testing.T, c transport.Context) (*batchv1.Job, runspec.Run) {
	t.Helper()
	run := specs.RunFor(c.Benchmark, false, time.Minute)
	pod, err := For(t, c).Pod(&run)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Validate(); err != nil {
		t.Fatalf("the runner would refuse the run: %v", err)
	}
	return specs.Job(specs.JobRequest{Benchmark: c.Benchmark, Ref: benchv1.RunRef{Transport: c.Spec.Name}, Pod: pod, Run: run,
		ActiveDeadline: 90 * time.Second, Defaults: Defaults}), run
}

// Env is the runner container's environment by name.
func Env(pod *corev1.PodSpec) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range pod.Containers[0].Env {
		out[e.Name] = e
	}
	return out
}

// Peers are tr's peers.
func Peers(t *testing.T, tr transport.Transport) []transport.Peer {
	t.Helper()
	peers, err := tr.Peers()
	if err != nil {
		t.Fatal(err)
	}
	return peers
}

// PeerKinds names tr's peers' kinds, in order.
func PeerKinds(t *testing.T, tr transport.Transport) []string {
	t.Helper()
	var kinds []string
	for _, p := range Peers(t, tr) {
		kinds = append(kinds, strings.TrimPrefix(fmt.Sprintf("%T", p.Object), "*v1."))
	}
	return kinds
}

// PeerOf is tr's first peer of type T.
func PeerOf[T any](t *testing.T, tr transport.Transport) T {
	t.Helper()
	for _, p := range Peers(t, tr) {
		if o, ok := p.Object.(T); ok {
			return o
		}
	}
	var zero T
	t.Fatalf("no peer of type %T", zero)
	return zero
}
