// Package ssh is the ssh transport: SSH tunnels between pgbench and the server, as `ssh -L` by
// hand. Its operator side (the gateway's keys, Service and sshd Deployment, the tunnels' sidecars
// in the runner pod) is this package; its in-pod ends are beneath it: sshkeys (the keys and the
// pinned host key) and sshtunnel (sshd's and ssh's command lines, ssh's log). It registers itself
// and its rules from init and is linked into the operator by internal/transport/transports.
package ssh

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshkeys"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshtunnel"
)

// The gateway: its key Secret, Service and sshd Deployment, created, read and removed by the
// operator (Secrets by name only, never listed).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;create;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;delete

func init() {
	transport.Register(benchv1.TransportSSH, func(c transport.Context) transport.Transport { return sshTransport{c: c} },
		transport.ServiceKind, transport.DeploymentKind, transport.NetworkPolicyKind)
	transport.RegisterRules(benchv1.TransportSSH, transport.Rules{CarriesPooler: true, Sweeps: "tunnels"})
}

// GatewayComponent is the component label of the SSH gateway.
const GatewayComponent = "ssh-gateway"

// gatewayKeyDir is where the gateway mounts its host key and authorized_keys.
const gatewayKeyDir = "/etc/tunnelbench/ssh-gateway"

// sshTransport reaches the server through SSH tunnels: an sshd gateway next to the server, shared
// by the benchmark's ssh transports, and one `ssh -L` native sidecar per tunnel next to
// pgbench, which connects to the tunnels' loopback ends. The gateway forwards to the server's host
// and port (in-cluster TCP, as in a hand-run `ssh -L` study where the tunnel ended next to the
// database). sslmode applies inside the tunnel.
type sshTransport struct {
	transport.Basic
	c transport.Context
}

// gatewayHost is the gateway Service's DNS name.
func gatewayHost(tb *benchv1.TunnelBenchmark) string {
	return fmt.Sprintf("%s.%s.svc", tb.GatewayName(), tb.Namespace)
}

// target is the server as the tunnel forwards to it and the gateway permits it: host:port, an
// IPv6 literal in brackets ([fd00::5]:5432), as ssh's -L and sshd's PermitOpen read it.
func (s sshTransport) target() string {
	return net.JoinHostPort(s.c.Server.Host, strconv.Itoa(int(s.c.Server.Port)))
}

// Peers are the gateway's key Secret, Service and sshd Deployment. Keys are generated once: an
// existing Secret is kept, so a restarted operator never swaps the keys under running tunnels.
// The gateway serves the whole benchmark (no transport label): it goes when the benchmark ends.
func (s sshTransport) Peers() ([]transport.Peer, error) {
	tb := s.c.Benchmark
	secret := &corev1.Secret{ObjectMeta: specs.OwnedMeta(tb, tb.GatewayName(), GatewayComponent, ""), Type: corev1.SecretTypeOpaque}
	// The fingerprint is reported only for keys this pass stored: an existing Secret wins.
	fingerprint := "kept from an earlier pass"
	gateway := gatewayDeployment(tb, s.target(), s.c.Defaults)
	peers := []transport.Peer{
		{Object: secret, Generate: func() error {
			m, err := sshkeys.Generate([]string{fmt.Sprintf("%s:%d", gatewayHost(tb), sshtunnel.GatewayPort)})
			if err != nil {
				return err
			}
			secret.Data, fingerprint = m.SecretData(), m.HostFingerprint
			return nil
		}},
		{Object: gatewayService(tb)},
	}
	peers = transport.WithNetworkPolicy(s.c, tb, gateway, peers)
	return append(peers, transport.Peer{Object: gateway, Ready: transport.DeploymentReady("the SSH gateway"),
		Created: func() (string, string) {
			return conditions.ReasonGatewayCreated, fmt.Sprintf("Started SSH gateway %s (host key %s)", tb.GatewayName(), fingerprint)
		}}), nil
}

func (s sshTransport) VerifiesServer() bool {
	return s.c.Spec.EffectiveSSH().SSLMode == "verify-ca"
}

func (s sshTransport) Pod(run *runspec.Run) (specs.Pod, error) {
	spec := s.c.Spec.EffectiveSSH()
	tb := s.c.Benchmark
	p := transport.LibPQ(s.c.Server, "127.0.0.1", runspec.TunnelBasePort, string(spec.SSLMode))
	if s.VerifiesServer() {
		transport.WithServerCA(&p, s.c.Server)
	}
	p.Volumes = append(p.Volumes,
		specs.SecretVolume("ssh-client", tb.GatewayName(),
			corev1.KeyToPath{Key: sshkeys.ClientKey, Path: sshkeys.ClientKey},
			corev1.KeyToPath{Key: sshkeys.KnownHosts, Path: sshkeys.KnownHosts}),
		corev1.Volume{Name: "ssh-logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	p.Mounts = append(p.Mounts,
		corev1.VolumeMount{Name: "ssh-client", MountPath: runspec.SSHClientDir, ReadOnly: true},
		corev1.VolumeMount{Name: "ssh-logs", MountPath: runspec.SSHLogDir})
	image, pullPolicy := specs.RunnerImage(tb, s.c.Defaults)
	for i := 0; i < int(spec.Tunnels); i++ {
		p.Sidecars = append(p.Sidecars, tunnelSidecar(i, s.tunnel(i, spec), image, pullPolicy))
	}
	run.Tunnels, run.TunnelPort, run.SSHLogDir = int(spec.Tunnels), runspec.TunnelBasePort, runspec.SSHLogDir
	run.CPUParts = append(run.CPUParts, runspec.CPUPart{Name: transport.GatewayPart,
		Host: tb.GatewayName() + "." + tb.Namespace + ".svc", Port: runspec.PeerCPUPort})
	return p, nil
}

// transport.Hop: the tunnels cross the link, as in the studies where ssh ran across the WAN and the
// gateway forwarded next to the database.
func (s sshTransport) Hop() transport.Hop {
	return transport.Hop{Host: gatewayHost(s.c.Benchmark), Port: sshtunnel.GatewayPort, What: "ssh client → SSH gateway"}
}

// tunnel is the ssh command of tunnel i. Through the link proxy ssh dials its loopback end and
// checks the gateway's pinned host key under the gateway's own name (HostKeyAlias).
func (s sshTransport) tunnel(i int, spec benchv1.SSHTransport) sshtunnel.Tunnel {
	hop := s.Hop()
	host, port := s.c.Dial(hop)
	alias := ""
	if host != hop.Host {
		alias = sshkeys.HostPattern(hop.Address())
	}
	return sshtunnel.Tunnel{
		Gateway: host, Port: int(port), HostKeyAlias: alias, LocalPort: runspec.TunnelBasePort + i,
		Target:       s.target(),
		IdentityFile: runspec.SSHClientDir + "/" + sshkeys.ClientKey, KnownHostsFile: runspec.SSHClientDir + "/" + sshkeys.KnownHosts,
		LogFile: runspec.TunnelLogFile(runspec.SSHLogDir, i), Compression: spec.Compression,
		Cipher: spec.Cipher, MAC: spec.MAC, KeepAlive: spec.KeepAliveInterval.Duration,
	}
}

// FailureReason: a gateway that cannot start leaves every tunnel down.
func (sshTransport) FailureReason() string { return conditions.ReasonTunnelDown }

// Record keeps what the tunnels negotiated, from ssh's own log, and the per-tunnel figures.
func (sshTransport) Record(rep *report.Report, out *benchv1.TransportResult) {
	if rep.SSH != nil {
		out.SSH = &benchv1.NegotiatedSSH{Cipher: rep.SSH.Cipher, MAC: rep.SSH.MAC, Compression: rep.SSH.Compression,
			ClientVersion: rep.SSH.ClientVersion, ServerVersion: rep.SSH.ServerVersion}
	}
	// The latest run's tunnels.
	out.Tunnels = nil
	for _, tn := range rep.Tunnels {
		out.Tunnels = append(out.Tunnels, benchv1.TunnelResult{Tunnel: int32(tn.Index), TPS: tn.TPS,
			LatencyAvgMs: tn.LatencyAvgMs, Transactions: tn.Transactions, FailedTransactions: tn.Failed})
	}
}

// Blame: a tunnel's sidecar or the gateway that broke leaves the tunnels down.
func (sshTransport) Blame(part string) string {
	if strings.HasPrefix(part, "tunnel-") || part == GatewayComponent {
		return conditions.ReasonTunnelDown
	}
	return ""
}

// Describe: libpq's TLS inside the tunnels, what ssh negotiated and how many tunnels there were.
func (sshTransport) Describe(res *benchv1.TransportResult) string {
	ssh := ""
	if s := res.SSH; s != nil {
		ssh = fmt.Sprintf("ssh %s, compression %s", s.Cipher, s.Compression)
		if n := len(res.Tunnels); n > 1 {
			ssh += fmt.Sprintf("; %d tunnels", n)
		}
	}
	return transport.Words(transport.TLSWords(res), ssh)
}

// tunnelSidecar is one `ssh -L` as a native sidecar (an init container that keeps running).
// Its startup probe holds pgbench back until the forward accepts connections; the kubelet stops
// it once pgbench has ended, so the Job still completes.
func tunnelSidecar(i int, tn sshtunnel.Tunnel, image string, pullPolicy corev1.PullPolicy) corev1.Container {
	c := specs.HelperContainer(fmt.Sprintf("tunnel-%d", i), image, pullPolicy, "100m", "16Mi", "128Mi")
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	c.Command, c.Args = []string{"ssh"}, tn.SSHArgs()
	c.StartupProbe = specs.StartupProbe(tn.LocalPort)
	c.VolumeMounts = append(c.VolumeMounts,
		corev1.VolumeMount{Name: "ssh-client", MountPath: runspec.SSHClientDir, ReadOnly: true},
		corev1.VolumeMount{Name: "ssh-logs", MountPath: runspec.SSHLogDir})
	return c
}

// gatewayService exposes the gateway's sshd.
func gatewayService(tb *benchv1.TunnelBenchmark) *corev1.Service {
	meta := specs.OwnedMeta(tb, tb.GatewayName(), GatewayComponent, "")
	return &corev1.Service{
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Selector: meta.Labels,
			Ports: []corev1.ServicePort{{Name: "ssh", Port: sshtunnel.GatewayPort,
				TargetPort: intstr.FromInt32(sshtunnel.GatewayPort), Protocol: corev1.ProtocolTCP}, transport.PeerCPUServicePort()},
		},
	}
}

// gatewayDeployment runs OpenSSH's sshd, unprivileged and hardened (sshtunnel.Gateway), next to
// the server: the only destination it forwards to is target.
func gatewayDeployment(tb *benchv1.TunnelBenchmark, target string, defaults specs.RunnerDefaults) *appsv1.Deployment {
	image, pullPolicy := specs.RunnerImage(tb, defaults)
	gw := sshtunnel.Gateway{
		HostKeyFile: gatewayKeyDir + "/" + sshkeys.HostKey, AuthorizedKeysFile: gatewayKeyDir + "/" + sshkeys.AuthorizedKeys,
		PermitOpen: target, Port: sshtunnel.GatewayPort,
	}
	sshd := specs.HelperContainer("sshd", image, pullPolicy, "250m", "32Mi", "128Mi")
	sshd.Command, sshd.Args = []string{"/usr/sbin/sshd"}, gw.SSHDArgs()
	sshd.Ports = []corev1.ContainerPort{{Name: "ssh", ContainerPort: sshtunnel.GatewayPort}}
	// sshd and the session processes it forks for each tunnel are the gateway's part of the path.
	transport.ServePeerCPU(&sshd)
	sshd.ReadinessProbe = specs.TCPReadiness(sshtunnel.GatewayPort)
	sshd.VolumeMounts = append(sshd.VolumeMounts, corev1.VolumeMount{Name: "keys", MountPath: gatewayKeyDir, ReadOnly: true})
	keys := specs.SecretVolume("keys", tb.GatewayName(),
		corev1.KeyToPath{Key: sshkeys.HostKey, Path: sshkeys.HostKey},
		corev1.KeyToPath{Key: sshkeys.AuthorizedKeys, Path: sshkeys.AuthorizedKeys})
	return specs.ServerSideDeployment(tb, specs.OwnedMeta(tb, tb.GatewayName(), GatewayComponent, ""), sshd, keys)
}
