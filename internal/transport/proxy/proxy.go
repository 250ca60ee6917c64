// Package proxy is the proxy transport, whole: one TCP hop between pgbench and the server, HAProxy
// in TCP mode next to the server (as a cloud TCP load balancer, or HAProxy in front of Patroni).
// It is the model of a transport in its own package: it registers itself from init with
// transport.Register and transport.RegisterRules, builds from transport's kit (Basic, LibPQ,
// WithNetworkPolicy, DeploymentReady, ServePeerCPU, …), and is linked into the operator by one
// line of internal/transport/transports. Its API settings are api/v1alpha1/proxy_types.go.
package proxy

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// The proxy: its Service and HAProxy Deployment, one per proxy transport.
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;create;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;delete

func init() {
	transport.Register(benchv1.TransportProxy, func(c transport.Context) transport.Transport { return tcpProxy{c: c} },
		transport.ServiceKind, transport.DeploymentKind, transport.NetworkPolicyKind)
	transport.RegisterRules(benchv1.TransportProxy, transport.Rules{CarriesPooler: true})
}

const (
	// Component is the component label of a proxy transport's objects.
	Component = "proxy"
	// proxyRole names them.
	proxyRole = "proxy"
	// proxyProbe is the runner's probe of the proxy's counters.
	proxyProbe = "haproxy"
)

// tcpProxy puts one TCP hop between pgbench and the server. libpq's TLS, when asked, passes
// through it to the server.
type tcpProxy struct {
	transport.Basic
	c transport.Context
}

func (p tcpProxy) name() string { return p.c.Benchmark.ObjectName(proxyRole, p.c.Spec.Name) }

func (p tcpProxy) host() string { return fmt.Sprintf("%s.%s.svc", p.name(), p.c.Benchmark.Namespace) }

// Peers are the proxy's Service, NetworkPolicy and Deployment; they serve this transport only.
func (p tcpProxy) Peers() ([]transport.Peer, error) {
	dep, err := p.deployment()
	if err != nil {
		return nil, err
	}
	peers := transport.WithNetworkPolicy(p.c, p.c.Benchmark, dep, []transport.Peer{{Object: p.service()}})
	return append(peers, transport.Peer{Object: dep, Ready: transport.DeploymentReady("the proxy"),
		Created: func() (string, string) {
			return conditions.ReasonProxyCreated, fmt.Sprintf("Started HAProxy %s in TCP mode to %s", p.name(), p.target())
		}}), nil
}

func (p tcpProxy) target() string {
	return net.JoinHostPort(p.c.Server.Host, strconv.Itoa(int(p.c.Server.Port)))
}

func (tcpProxy) FailureReason() string { return conditions.ReasonProxyUnavailable }

func (p tcpProxy) VerifiesServer() bool { return p.c.Spec.EffectiveProxy().SSLMode == "verify-ca" }

// Blame: the proxy's pods that broke leave the proxy unavailable.
func (tcpProxy) Blame(part string) string {
	if part == Component {
		return conditions.ReasonProxyUnavailable
	}
	return ""
}

// Hop: the link sits between pgbench and the proxy, as between a client and its load balancer.
func (p tcpProxy) Hop() transport.Hop {
	return transport.Hop{Host: p.host(), Port: ListenPort, What: "pgbench → proxy"}
}

func (p tcpProxy) Pod(run *runspec.Run) (specs.Pod, error) {
	pod := transport.LibPQ(p.c.Server, p.host(), ListenPort, string(p.c.Spec.EffectiveProxy().SSLMode))
	p.c.LibPQVia(&pod)
	if p.VerifiesServer() {
		transport.WithServerCA(&pod, p.c.Server)
	}
	run.Probes = append(run.Probes, runspec.Probe{Name: proxyProbe,
		URL: "http://" + net.JoinHostPort(p.host(), strconv.Itoa(StatsPort)) + StatsPath})
	run.CPUParts = append(run.CPUParts, runspec.CPUPart{Name: Component, Host: p.host(), Port: runspec.PeerCPUPort})
	return pod, nil
}

// Record keeps what the proxy counted while the load ran: the connections it carried, the bytes
// both ways, and the connections to the server that failed.
func (tcpProxy) Record(rep *report.Report, out *benchv1.TransportResult) {
	out.Evidence = nil
	pr := rep.ProbeNamed(proxyProbe)
	if pr == nil {
		return
	}
	before, errBefore := ParseCSV(strings.NewReader(pr.Before))
	after, errAfter := ParseCSV(strings.NewReader(pr.After))
	if pr.Error != "" || errBefore != nil || errAfter != nil {
		out.Evidence = []benchv1.Evidence{{Name: "haproxy counters", Value: fmt.Sprintf("not read: %s %v %v",
			pr.Error, errBefore, errAfter)}}
		return
	}
	f, b := after.Frontend.Sub(before.Frontend), after.Backend.Sub(before.Backend)
	out.Evidence = []benchv1.Evidence{
		{Name: "haproxy connections during the load", Value: fmt.Sprintf("%d from clients, %d to the server, %d failed",
			f.Sessions, b.Sessions, b.ConnectionErrors)},
		{Name: "haproxy bytes during the load", Value: fmt.Sprintf("from clients %d, to clients %d", f.BytesIn, f.BytesOut)},
	}
}

// Describe: libpq's TLS through the proxy, then the proxy.
func (tcpProxy) Describe(res *benchv1.TransportResult) string {
	return transport.Words(transport.TLSWords(res), "HAProxy (TCP mode)")
}

func (p tcpProxy) meta() metav1.ObjectMeta {
	return specs.OwnedMeta(p.c.Benchmark, p.name(), Component, p.c.Spec.Name)
}

// service exposes the proxy's PostgreSQL port, its statistics and its CPU accounting.
func (p tcpProxy) service() *corev1.Service {
	meta := p.meta()
	return &corev1.Service{
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Selector: meta.Labels,
			Ports: []corev1.ServicePort{
				{Name: "postgres", Port: ListenPort, TargetPort: intstr.FromInt32(ListenPort), Protocol: corev1.ProtocolTCP},
				{Name: "stats", Port: StatsPort, TargetPort: intstr.FromInt32(StatsPort), Protocol: corev1.ProtocolTCP},
				transport.PeerCPUServicePort()},
		},
	}
}

// proxyConfig is where HAProxy reads its configuration, written at start from proxyConfigEnv.
const (
	proxyConfig    = "/tmp/haproxy/cfg"
	proxyConfigEnv = "HAPROXY_CONFIG"
	// haproxyBinary is Debian's HAProxy (outside the image's PATH).
	haproxyBinary = "/usr/sbin/haproxy"
)

// deployment runs HAProxy in the foreground next to the server, its configuration (no secret: a
// host and a port) written from the pod spec by `tunnelbench-runner with-file`.
func (p tcpProxy) deployment() (*appsv1.Deployment, error) {
	tb := p.c.Benchmark
	config, err := Config{Target: p.target()}.Render()
	if err != nil {
		return nil, fmt.Errorf("transport %s: %w", p.c.Spec.Name, err)
	}
	image, pullPolicy := specs.RunnerImage(tb, p.c.Defaults)
	c := specs.HelperContainer("haproxy", image, pullPolicy, "250m", "32Mi", "256Mi")
	c.Command = []string{"tunnelbench-runner"}
	c.Args = []string{"with-file", "--path=" + proxyConfig, "--from-env=" + proxyConfigEnv, "--", haproxyBinary, "-db", "-f", proxyConfig}
	c.Env = append(c.Env, corev1.EnvVar{Name: proxyConfigEnv, Value: config})
	c.Ports = []corev1.ContainerPort{{Name: "postgres", ContainerPort: ListenPort},
		{Name: "stats", ContainerPort: StatsPort}}
	// HAProxy's processes are the proxy's part of the path.
	transport.ServePeerCPU(&c)
	c.ReadinessProbe = specs.TCPReadiness(ListenPort)
	return specs.ServerSideDeployment(tb, p.meta(), c), nil
}
