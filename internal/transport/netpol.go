package transport

import (
	"cmp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// A peer's NetworkPolicy: what the operator starts next to the server (the SSH gateway, a shared
// PgBouncer) forwards to the database with the benchmark's credentials or keys, so it accepts
// connections only from the benchmark's own runner pods, on the ports it serves. The kubelet's
// probes come from the node, which NetworkPolicy implementations let through.
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;create;delete

// NetworkPolicyKind is the kind of a peer Deployment's NetworkPolicy, for Register.
var NetworkPolicyKind = networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy")

// admitRunnersOnly is the NetworkPolicy of a peer Deployment, named after it.
func admitRunnersOnly(tb *benchv1.TunnelBenchmark, dep *appsv1.Deployment) *networkingv1.NetworkPolicy {
	var ports []networkingv1.NetworkPolicyPort
	for _, c := range dep.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			ports = append(ports, PolicyPort(p.Protocol, p.ContainerPort))
		}
	}
	return AdmitRunners(tb, *dep.ObjectMeta.DeepCopy(), *dep.Spec.Selector.DeepCopy(), ports...)
}

// PolicyPort is a port of a NetworkPolicy, TCP unless protocol says otherwise (WireGuard's UDP).
func PolicyPort(protocol corev1.Protocol, number int32) networkingv1.NetworkPolicyPort {
	port := intstr.FromInt32(number)
	return networkingv1.NetworkPolicyPort{Protocol: ptrTo(cmp.Or(protocol, corev1.ProtocolTCP)), Port: &port}
}

// AdmitRunners is a NetworkPolicy admitting only tb's runner pods to the pods selector selects, on
// the ports given: every peer's, whoever makes its pods (the operator, or CloudNativePG for its
// Pooler).
func AdmitRunners(tb *benchv1.TunnelBenchmark, meta metav1.ObjectMeta, selector metav1.LabelSelector,
	ports ...networkingv1.NetworkPolicyPort) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: meta,
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: selector,
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					benchv1.LabelBenchmark: tb.Name, benchv1.LabelComponent: specs.RunnerComponent}}}},
				Ports: ports,
			}},
		},
	}
}

// WithNetworkPolicy adds the peer Deployment's NetworkPolicy when the operator makes them,
// before the Deployment: its pods never run unguarded.
func WithNetworkPolicy(c Context, tb *benchv1.TunnelBenchmark, dep *appsv1.Deployment, peers []Peer) []Peer {
	if !c.NetworkPolicies {
		return peers
	}
	return append(peers, Peer{Object: admitRunnersOnly(tb, dep)})
}

func ptrTo[T any](v T) *T { return &v }
