package vpn

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// What both kinds of vpn transport share: libpq's sslmode inside the tunnel, a tunnel that breaks
// as TunnelDown, and a gateway next to the server made of a key Secret (made once: an existing
// one is kept, so a restarted operator never swaps keys under a tunnel), a UDP Service, a
// NetworkPolicy and a Deployment.

// vpnCommon is the part of a vpn transport both kinds share.
type vpnCommon struct {
	transport.Basic
	c transport.Context
}

func (v vpnCommon) VerifiesServer() bool { return v.c.Spec.EffectiveVPN().SSLMode == "verify-ca" }

// FailureReason: a gateway that cannot start leaves the tunnel down.
func (vpnCommon) FailureReason() string { return conditions.ReasonTunnelDown }

// tunnelGateway describes a vpn kind's gateway.
type tunnelGateway struct {
	c transport.Context
	// name is its objects' name, component their component label.
	name, component string
	// kind names the VPN in messages (WireGuard, OpenVPN); how says what it runs with.
	kind, how string
	// port is the gateway's UDP port, portName its name.
	port     int32
	portName string
	// keys makes the Secret's data.
	keys func() (map[string][]byte, error)
	// deployment runs the gateway.
	deployment *appsv1.Deployment
}

// peers are the gateway's Secret, Service, NetworkPolicy and Deployment, in that order.
func (g tunnelGateway) peers() []transport.Peer {
	tb := g.c.Benchmark
	secret := &corev1.Secret{ObjectMeta: specs.OwnedMeta(tb, g.name, g.component, ""), Type: corev1.SecretTypeOpaque}
	peers := []transport.Peer{
		{Object: secret, Generate: func() (err error) {
			secret.Data, err = g.keys()
			return err
		}},
		{Object: g.service()},
	}
	peers = transport.WithNetworkPolicy(g.c, tb, g.deployment, peers)
	return append(peers, transport.Peer{Object: g.deployment, Ready: transport.DeploymentReady("the " + g.kind + " gateway"),
		Created: func() (string, string) {
			return conditions.ReasonGatewayCreated, fmt.Sprintf("Started %s gateway %s (%s)", g.kind, g.name, g.how)
		}})
}

// service exposes the gateway's UDP port and its CPU port.
func (g tunnelGateway) service() *corev1.Service {
	meta := specs.OwnedMeta(g.c.Benchmark, g.name, g.component, "")
	return &corev1.Service{
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Selector: meta.Labels,
			Ports: []corev1.ServicePort{{Name: g.portName, Port: g.port, TargetPort: intstr.FromInt32(g.port),
				Protocol: corev1.ProtocolUDP}, transport.PeerCPUServicePort()},
		},
	}
}

// tunnelBlame: the client's sidecar or the gateway that broke leaves the tunnel down.
func tunnelBlame(part, clientContainer, gatewayComponent string) string {
	if part == clientContainer || part == gatewayComponent {
		return conditions.ReasonTunnelDown
	}
	return ""
}
