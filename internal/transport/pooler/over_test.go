package pooler

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshtunnel"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn"
)

// overBenchmark has a sidecar pooler over a transport of the given type.
func overBenchmark(inner benchv1.TransportSpec) (*benchv1.TunnelBenchmark, benchv1.TransportSpec) {
	layered := benchv1.TransportSpec{Name: "pooled", Type: benchv1.TransportPooler, Pooler: &benchv1.PoolerTransport{
		Placement: benchv1.PoolerSidecar, Over: inner.Name, ServerTLS: benchv1.ServerTLSRequire}}
	tb := benchmark(func(tb *benchv1.TunnelBenchmark) { tb.Spec.Transports = []benchv1.TransportSpec{inner, layered} })
	return tb, layered
}

func TestPoolerOver(t *testing.T) {
	tests := []struct {
		inner      benchv1.TransportSpec
		server     string // where the pooler's server connections go
		sidecars   []string
		peerKinds  []string
		brokenPart string
	}{
		{benchv1.TransportSpec{Name: "wg", Type: benchv1.TransportVPN}, "--server=127.0.0.1:15432",
			[]string{vpn.VPNClientContainer, PoolerContainer}, []string{"Secret", "Service", "NetworkPolicy", "Deployment"}, vpn.VPNClientContainer},
		{benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH}, "--server=127.0.0.1:15432",
			[]string{"tunnel-0", PoolerContainer}, []string{"Secret", "Service", "NetworkPolicy", "Deployment"}, "tunnel-0"},
	}
	for _, tt := range tests {
		t.Run(string(tt.inner.Type), func(t *testing.T) {
			tb, spec := overBenchmark(tt.inner)
			c := transport.Context{Benchmark: tb, Spec: spec, Server: server, Defaults: defaults, NetworkPolicies: true}
			tr, err := transport.For(c)
			if err != nil {
				t.Fatal(err)
			}
			alone, _ := transport.For(transport.Context{Benchmark: tb, Spec: tt.inner, Server: server, Defaults: defaults, NetworkPolicies: true})
			var run runspec.Run
			pod, err := tr.Pod(&run)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range pod.Sidecars {
				names = append(names, s.Name)
			}
			if !slices.Equal(names, tt.sidecars) {
				t.Errorf("sidecars %v, want %v (the path's first: the pooler's startup waits on it)", names, tt.sidecars)
			}
			args := strings.Join(pod.Sidecars[len(pod.Sidecars)-1].Args, " ")
			if !strings.Contains(args, tt.server) {
				t.Errorf("the pooler must connect through the path (%s): %s", tt.server, args)
			}
			env := map[string]string{}
			for _, e := range pod.Env {
				env[e.Name] = e.Value
			}
			if env["PGHOST"] != "127.0.0.1" || env["PGPORT"] != "6432" || run.Tunnels != 1 || run.TunnelPort != 0 {
				t.Errorf("pgbench must connect to the pooler: %v, tunnels %d port %d", env, run.Tunnels, run.TunnelPort)
			}
			peers, err := tr.Peers()
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, p := range peers {
				kinds = append(kinds, strings.TrimPrefix(strings.TrimPrefix(typeName(p.Object), "*v1."), "*"))
			}
			if !slices.Equal(kinds, tt.peerKinds) {
				t.Errorf("peers %v, want the path's %v", kinds, tt.peerKinds)
			}
			if tr.Hop() != alone.Hop() {
				t.Errorf("the link sits on the path's hop %+v, not %+v", alone.Hop(), tr.Hop())
			}
			if got, want := tr.Blame(tt.brokenPart), alone.Blame(tt.brokenPart); got != want || got == "" {
				t.Errorf("a broken %s: %q, want the path's %q", tt.brokenPart, got, want)
			}
			if tr.Blame(PoolerContainer) != conditions.ReasonPoolerUnavailable {
				t.Errorf("a broken pooler is the pooler's")
			}
		})
	}
}

func TestPoolerOverKeepsThePathsEvidence(t *testing.T) {
	tb, spec := overBenchmark(benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH})
	tr, err := transport.For(transport.Context{Benchmark: tb, Spec: spec, Server: server, Defaults: defaults})
	if err != nil {
		t.Fatal(err)
	}
	var run runspec.Run
	if _, err := tr.Pod(&run); err != nil {
		t.Fatal(err)
	}
	if run.SSHLogDir == "" || !slices.ContainsFunc(run.CPUParts, func(p runspec.CPUPart) bool { return p.Name == transport.GatewayPart }) {
		t.Errorf("the runner must read ssh's log and the gateway's CPU: %+v", run)
	}
	res := &benchv1.TransportResult{TLS: &benchv1.NegotiatedTLS{Version: "TLSv1.3", Cipher: "X"}}
	tr.Record(reportWithSSH(), res)
	if res.SSH == nil || res.Pooler == nil {
		t.Fatalf("both parts' evidence: %+v", res)
	}
	if got := tr.Describe(res); !strings.Contains(got, "over ssh: ssh aes128-ctr") || strings.Count(got, "TLSv1.3") != 1 {
		t.Errorf("description %q", got)
	}
}

// typeName is an object's Go type, as *v1.Secret.
func typeName(o any) string { return fmt.Sprintf("%T", o) }

func reportWithSSH() *report.Report {
	return &report.Report{SSH: &sshtunnel.Negotiated{Cipher: "aes128-ctr", Compression: "none"},
		TLS:    &report.TLS{Version: "TLSv1.3", Cipher: "X"},
		Pooler: &report.Pooler{Counted: true, Transactions: 10, ServerConnections: 1}}
}
