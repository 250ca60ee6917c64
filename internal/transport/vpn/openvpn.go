package vpn

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn/openvpn"
)

// The OpenVPN gateway: its certificate Secret, Service and Deployment, created, read and removed
// by the operator (Secrets by name only, never listed); the RBAC is the WireGuard gateway's.

const (
	// OpenVPNGatewayComponent is the component label of the OpenVPN gateway.
	OpenVPNGatewayComponent = "openvpn-gateway"
	// OpenVPNClientContainer is the tunnel's client end in the runner pod.
	OpenVPNClientContainer = "openvpn"
	// openVPNKeyDir is where each end mounts the CA's certificate and its own.
	openVPNKeyDir = "/etc/tunnelbench/openvpn"
	// openVPNProbe is the runner's probe of the client's counters.
	openVPNProbe = "openvpn"
)

// openVPN reaches the server through an OpenVPN tunnel (vpn.kind openvpn): a gateway next to the
// server, shared by the benchmark's openvpn transports, forwarding its tunnel address to the
// server only, and a native sidecar in the runner pod whose TUN device routes the tunnel's subnet,
// so pgbench connects to the gateway's tunnel address itself. Both ends run openvpn as root with
// NET_ADMIN (specs.TUNDeviceSecurity): admission.Policy refuses the benchmark unless the
// operator's administrator allowed privileged transports. sslmode applies inside the tunnel.
type openVPN struct{ vpnCommon }

func (o openVPN) gatewayName() string { return o.c.Benchmark.ObjectName(OpenVPNGatewayComponent, "") }

func (o openVPN) gatewayHost() string {
	return fmt.Sprintf("%s.%s.svc", o.gatewayName(), o.c.Benchmark.Namespace)
}

// Peers are the gateway's certificate Secret (a CA, the gateway's and the runners' certificates),
// Service, NetworkPolicy and Deployment.
func (o openVPN) Peers() ([]transport.Peer, error) {
	return tunnelGateway{c: o.c, name: o.gatewayName(), component: OpenVPNGatewayComponent, kind: "OpenVPN",
		how: "root with NET_ADMIN, certificates pinned", port: openvpn.ListenPort, portName: "openvpn",
		keys:       func() (map[string][]byte, error) { return openvpn.SecretData(o.gatewayName()) },
		deployment: o.gatewayDeployment()}.peers(), nil
}

// Blame: the client's sidecar or the gateway that broke leaves the tunnel down.
func (openVPN) Blame(part string) string {
	return tunnelBlame(part, OpenVPNClientContainer, OpenVPNGatewayComponent)
}

// Hop: the tunnel's UDP crosses the link, from the runner pod to the gateway.
func (o openVPN) Hop() transport.Hop {
	return transport.Hop{Host: o.gatewayHost(), Port: openvpn.ListenPort, What: "OpenVPN client → gateway (UDP)"}
}

func (o openVPN) Pod(run *runspec.Run) (specs.Pod, error) {
	tb := o.c.Benchmark
	p := transport.LibPQ(o.c.Server, openvpn.GatewayAddr.String(), openvpn.ForwardPort, string(o.c.Spec.EffectiveVPN().SSLMode))
	if o.VerifiesServer() {
		transport.WithServerCA(&p, o.c.Server)
	}
	p.Volumes = append(p.Volumes, o.keyVolume(openvpn.ClientCert, openvpn.ClientKey))
	image, pullPolicy := specs.RunnerImage(tb, o.c.Defaults)
	c := specs.HelperContainer(OpenVPNClientContainer, image, pullPolicy, "100m", "16Mi", "128Mi")
	c.SecurityContext = specs.TUNDeviceSecurity()
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	host, port := o.c.Dial(o.Hop())
	c.Command, c.Args = []string{"tunnelbench-runner"}, []string{"ovpn-client", "--key-dir=" + openVPNKeyDir,
		"--gateway-name=" + o.gatewayName(), "--remote=" + net.JoinHostPort(host, strconv.Itoa(int(port))),
		"--run-dir=" + runspec.TmpMountPath + "/openvpn", "--counters=" + o.countersAddr()}
	// The runner starts once the server answers at the far end of the tunnel.
	c.StartupProbe = specs.StartupProbeAt(net.JoinHostPort(openvpn.GatewayAddr.String(), strconv.Itoa(openvpn.ForwardPort)))
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "openvpn", MountPath: openVPNKeyDir, ReadOnly: true})
	p.Sidecars = append(p.Sidecars, c)
	run.Probes = append(run.Probes, runspec.Probe{Name: openVPNProbe, URL: "http://" + o.countersAddr() + "/"})
	run.CPUParts = append(run.CPUParts, runspec.CPUPart{Name: transport.GatewayPart, Host: o.gatewayHost(), Port: runspec.PeerCPUPort})
	return p, nil
}

// countersAddr is where the client serves its counters, on the runner pod's loopback.
func (openVPN) countersAddr() string { return "127.0.0.1:" + strconv.Itoa(vpnCountersPort) }

// keyVolume mounts the CA's certificate and one end's certificate and key.
func (o openVPN) keyVolume(cert, key string) corev1.Volume {
	return specs.SecretVolume("openvpn", o.gatewayName(), corev1.KeyToPath{Key: openvpn.CACert, Path: openvpn.CACert},
		corev1.KeyToPath{Key: cert, Path: cert}, corev1.KeyToPath{Key: key, Path: key})
}

// Record keeps what the client's end negotiated and counted while the load ran.
func (openVPN) Record(rep *report.Report, out *benchv1.TransportResult) {
	out.Evidence = nil
	pr := rep.ProbeNamed(openVPNProbe)
	if pr == nil {
		return
	}
	var before, after openvpn.Counters
	if pr.Error != "" || json.Unmarshal([]byte(pr.Before), &before) != nil || json.Unmarshal([]byte(pr.After), &after) != nil {
		out.Evidence = []benchv1.Evidence{{Name: "openvpn counters", Value: "not read: " + pr.Error}}
		return
	}
	out.Evidence = []benchv1.Evidence{
		{Name: openVPNDataCipher, Value: after.DataCipher},
		{Name: "openvpn control channel", Value: after.ControlChannel},
		{Name: "openvpn bytes during the load", Value: fmt.Sprintf("TUN %d out, %d in; UDP %d sent, %d received",
			after.TunRead-before.TunRead, after.TunWrite-before.TunWrite,
			after.LinkWrite-before.LinkWrite, after.LinkRead-before.LinkRead)},
	}
}

// openVPNDataCipher names the evidence of the data channel's negotiated cipher.
const openVPNDataCipher = "openvpn data channel"

// Describe: libpq's TLS inside the tunnel, then the tunnel with its negotiated data cipher.
func (openVPN) Describe(res *benchv1.TransportResult) string {
	tunnel := "OpenVPN (kernel TUN, UDP)"
	for _, e := range res.Evidence {
		if e.Name == openVPNDataCipher && e.Value != "" {
			tunnel = "OpenVPN (kernel TUN, UDP, " + e.Value + ")"
		}
	}
	return transport.Words(transport.TLSWords(res), tunnel)
}

// gatewayDeployment runs the gateway end next to the server: the only destination it forwards to
// is the server. Ready once it forwards (its counters answer then).
func (o openVPN) gatewayDeployment() *appsv1.Deployment {
	tb := o.c.Benchmark
	image, pullPolicy := specs.RunnerImage(tb, o.c.Defaults)
	c := specs.HelperContainer("openvpn", image, pullPolicy, "250m", "16Mi", "128Mi")
	c.SecurityContext = specs.TUNDeviceSecurity()
	target := net.JoinHostPort(o.c.Server.Host, strconv.Itoa(int(o.c.Server.Port)))
	c.Command, c.Args = []string{"tunnelbench-runner"}, []string{"ovpn-gateway", "--key-dir=" + openVPNKeyDir,
		"--gateway-name=" + o.gatewayName(), "--target=" + target, "--run-dir=" + runspec.TmpMountPath + "/openvpn",
		"--counters=:" + strconv.Itoa(vpnCountersPort)}
	c.Ports = []corev1.ContainerPort{{Name: "openvpn", ContainerPort: openvpn.ListenPort, Protocol: corev1.ProtocolUDP}}
	transport.ServePeerCPU(&c)
	c.ReadinessProbe = specs.TCPReadiness(vpnCountersPort)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "openvpn", MountPath: openVPNKeyDir, ReadOnly: true})
	return specs.ServerSideDeployment(tb, specs.OwnedMeta(tb, o.gatewayName(), OpenVPNGatewayComponent, ""), c,
		o.keyVolume(openvpn.GatewayCert, openvpn.GatewayKey))
}
