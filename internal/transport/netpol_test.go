package transport

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// TestPeersAdmitOnlyTheirRunners: with NetworkPolicies on, the SSH gateway and a shared PgBouncer
// come with a NetworkPolicy, created before their Deployment, that selects their pods and admits
// only the benchmark's runner pods on the ports they serve; without it, none.
func TestPeersAdmitOnlyTheirRunners(t *testing.T) {
	external := benchmark(func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "db"}}
	})
	cnpg := benchmark(func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.Server = benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "pg"}}
	})
	for _, tt := range []struct {
		name  string
		tb    *benchv1.TunnelBenchmark
		spec  benchv1.TransportSpec
		ports []int32
	}{
		// The service, and the peer's CPU accounting for the runner.
		{"ssh", external, benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH}, []int32{2222, runspec.PeerCPUPort}},
		{"pooler", external, benchv1.TransportSpec{Name: "pooler", Type: benchv1.TransportPooler},
			[]int32{TestPoolerListen, runspec.PeerCPUPort}},
		// CloudNativePG makes the Pooler's pods: its PgBouncer and exporter, before the Pooler.
		{"CloudNativePG Pooler", cnpg, benchv1.TransportSpec{Name: "pooler", Type: benchv1.TransportPooler},
			[]int32{TestCNPGPoolerPort, TestCNPGExporter}},
	} {
		tb := tt.tb
		t.Run(tt.name, func(t *testing.T) {
			for _, enabled := range []bool{true, false} {
				tr, err := For(Context{Benchmark: tb, Spec: tt.spec, Server: server, Defaults: defaults, NetworkPolicies: enabled})
				if err != nil {
					t.Fatal(err)
				}
				peers, err := tr.Peers()
				if err != nil {
					t.Fatal(err)
				}
				var policy *networkingv1.NetworkPolicy
				for _, p := range peers {
					switch o := p.Object.(type) {
					case *networkingv1.NetworkPolicy:
						policy = o
					case *appsv1.Deployment:
						if enabled && policy == nil {
							t.Fatal("the Deployment comes before its NetworkPolicy")
						}
						if policy != nil && !equalLabels(policy.Spec.PodSelector.MatchLabels, o.Spec.Selector.MatchLabels) {
							t.Errorf("the policy selects %v, the Deployment's pods are %v", policy.Spec.PodSelector.MatchLabels, o.Spec.Selector.MatchLabels)
						}
					case *unstructured.Unstructured:
						if enabled && policy == nil {
							t.Fatal("the CloudNativePG Pooler comes before its NetworkPolicy")
						}
						want := map[string]string{"cnpg.io/poolerName": o.GetName()}
						if policy != nil && !equalLabels(policy.Spec.PodSelector.MatchLabels, want) {
							t.Errorf("the policy selects %v, the Pooler's pods are %v", policy.Spec.PodSelector.MatchLabels, want)
						}
					}
				}
				if !enabled {
					if policy != nil {
						t.Error("a NetworkPolicy although disabled")
					}
					continue
				}
				if policy == nil || len(policy.Spec.Ingress) != 1 || len(policy.Spec.Ingress[0].From) != 1 {
					t.Fatalf("policy %+v", policy)
				}
				from := policy.Spec.Ingress[0].From[0].PodSelector.MatchLabels
				if from[benchv1.LabelBenchmark] != tb.Name || from[benchv1.LabelComponent] != specs.RunnerComponent || len(from) != 2 {
					t.Errorf("admits %v, want the benchmark's runner pods", from)
				}
				var ports []int32
				for _, p := range policy.Spec.Ingress[0].Ports {
					ports = append(ports, p.Port.IntVal)
				}
				if !slices.Equal(ports, tt.ports) {
					t.Errorf("ports %v, want %v", ports, tt.ports)
				}
				if policy.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
					t.Errorf("policy types %v", policy.Spec.PolicyTypes)
				}
			}
		})
	}
}

func equalLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
