package transport

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/testing/benchfixture"
)

// TestValidateRefuses: each cross-field rule of the transports (Rules), on the one valid benchmark
// changed in the one way it is about, refuses it naming the field and saying what to do. These
// were CEL rules of the CRD that named transport types; the webhook and the reconciler check them
// (admission.Policy.Refusals), and api/v1alpha1's test holds that they accept what the CRD does.
func TestValidateRefuses(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(tb *benchv1.TunnelBenchmark)
		want   []string
	}{
		{
			name: "more clients than a managed server's max_connections",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{Parameters: map[string]string{"max_connections": "50"}}}
				tb.Spec.Load.Clients = 48
			},
			want: []string{"spec.load.clients must leave 3 of the managed server's max_connections", "raise max_connections"},
		},
		{
			name: "more clients than the default max_connections",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{}}
				tb.Spec.Load.Clients = 98
			},
			want: []string{"default 100"},
		},
		{
			name: "verify-full against an external server without CA",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "db", Database: "app",
					CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}}
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "t", Type: "tls"}}
			},
			want: []string{"spec.transports", "need spec.server.external.caSecret"},
		},
		{
			name: "a vpn behind the userspace link emulator",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "wg", Type: "vpn"}}
				tb.Spec.Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 10 * time.Millisecond}}
			},
			want: []string{"cannot carry a vpn transport's packets"},
		},
		{
			name: "a pooler over a vpn behind the userspace link emulator",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{
					{Name: "wg", Type: "vpn", Network: &benchv1.NetworkSpec{}},
					{Name: "p", Type: "pooler", Pooler: &benchv1.PoolerTransport{Placement: "sidecar", Over: "wg"}}}
				tb.Spec.Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 10 * time.Millisecond}}
			},
			want: []string{"nor a pooler's over one"},
		},
		{
			name: "a sidecar pooler over a tls transport",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "t", Type: "tls"},
					{Name: "p", Type: "pooler", Pooler: &benchv1.PoolerTransport{Placement: "sidecar", Over: "t"}}}
			},
			want: []string{"spec.transports[1].pooler.over", "pooler.over must name a transport of this benchmark of type proxy, ssh or vpn"},
		},
		{
			name: "a sidecar pooler over a transport that is not there",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "p", Type: "pooler", Pooler: &benchv1.PoolerTransport{
					Placement: "sidecar", Over: "wg"}}}
			},
			want: []string{"spec.transports[0].pooler.over", "pooler.over must name a transport of this benchmark of type proxy, ssh or vpn"},
		},
		{
			name: "pooler client limit below the clients",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerSpecs(&benchv1.PoolerTransport{MaxClientConnections: 2})
			},
			want: []string{"spec.transports", "maxClientConnections (default 1000) must be at least spec.load.clients"},
		},
		{
			name: "default pooler client limit below the clients",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerSpecs(nil)
				tb.Spec.Load.Clients, tb.Spec.Load.Threads = 2000, 8
			},
			want: []string{"spec.transports", "maxClientConnections (default 1000)"},
		},
		{
			name: "session pool smaller than the clients",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerSpecs(&benchv1.PoolerTransport{PoolSize: 2})
			},
			want: []string{"spec.transports", "pooler.poolSize (default 20) must be at least spec.load.clients in poolMode session"},
		},
		{
			name: "a verify-full sidecar pooler across the userspace link",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerSpecs(&benchv1.PoolerTransport{Placement: "sidecar", ServerTLS: "verify-full"})
				tb.Spec.Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 10 * time.Millisecond}}
			},
			want: []string{"spec.transports", "serverTLS verify-full cannot cross the userspace link"},
		},
		{
			name: "a session pool smaller than a point's clients",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerSpecs(&benchv1.PoolerTransport{PoolSize: 10})
				tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 4, 16}}
			},
			want: []string{"pooler.poolSize (default 20) must be at least spec.load.clients in poolMode session, " +
				"at every point of spec.sweep.clients"},
		},
		{
			name: "a tunnels sweep without ssh",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Sweep = &benchv1.SweepSpec{Tunnels: []int32{1, 2}}
				tb.Spec.Load.Clients, tb.Spec.Load.Threads = 4, 1
			},
			want: []string{"spec.sweep.tunnels needs a transport of type ssh"},
		},
		{
			name: "a pool size sweep of a shared pooler",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerSpecs(&benchv1.PoolerTransport{PoolMode: "transaction"})
				tb.Spec.Load.Protocol = "extended"
				tb.Spec.Sweep = &benchv1.SweepSpec{PoolSize: []int32{1, 4}}
			},
			want: []string{"spec.sweep.poolSize needs pooler transports, every one with placement sidecar"},
		},
		{
			name:   "a pool size sweep without a pooler",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Sweep = &benchv1.SweepSpec{PoolSize: []int32{1, 4}} },
			want:   []string{"spec.sweep.poolSize", "needs a transport of type pooler"},
		},
		{
			name: "a session pool sweep below the clients",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerSpecs(&benchv1.PoolerTransport{Placement: "sidecar"})
				tb.Spec.Sweep = &benchv1.SweepSpec{PoolSize: []int32{2, 8}}
			},
			want: []string{"pooler.poolSize (default 20) must be at least spec.load.clients in poolMode session"},
		},
		{
			// Every pod would hold the same WireGuard key and the gateway has one peer.
			name: "a WireGuard transport from two runner pods",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = append(tb.Spec.Transports, benchv1.TransportSpec{Name: "wg", Type: benchv1.TransportVPN})
				tb.Spec.Runner = &benchv1.RunnerSpec{Pods: 2}
			},
			want: []string{"spec.runner.pods", "a WireGuard transport runs from one runner pod yet"},
		},
		{
			name: "more runner pods than clients",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Runner = &benchv1.RunnerSpec{Pods: 8}
			},
			want: []string{"spec.runner.pods", "every pod needs at least one client per tunnel"},
		},
		{
			name: "runner pods × tunnels beyond the first point's clients",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = sshSpecs(&benchv1.SSHTransport{Tunnels: 2})
				tb.Spec.Runner = &benchv1.RunnerSpec{Pods: 2}
				tb.Spec.Load.Clients = 4
				tb.Spec.Sweep = &benchv1.SweepSpec{Tunnels: []int32{1, 4}}
			},
			want: []string{"spec.runner.pods"},
		},
		{
			name: "a copy in several runner pods",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Initialize = "", true
				tb.Spec.Load.Copy = &benchv1.CopyLoad{Size: resource.MustParse("64Mi")}
				tb.Spec.Runner = &benchv1.RunnerSpec{Pods: 2}
			},
			want: []string{"a copy load runs in one pod"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := benchfixture.New("ns", "b")
			tt.mutate(tb)
			errs := Validate(&tb.Spec)
			if len(errs) == 0 {
				t.Fatal("accepted")
			}
			got := errs.ToAggregate().Error()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not mention %q", got, w)
				}
			}
		})
	}
}

func poolerSpecs(p *benchv1.PoolerTransport) []benchv1.TransportSpec {
	return []benchv1.TransportSpec{{Name: "pooler", Type: benchv1.TransportPooler, Pooler: p}}
}

func sshSpecs(ssh *benchv1.SSHTransport) []benchv1.TransportSpec {
	return []benchv1.TransportSpec{{Name: "ssh", Type: benchv1.TransportSSH, SSH: ssh}}
}
