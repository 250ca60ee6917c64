package transport

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
	"github.com/tunnelbench/tunnelbench/internal/transport/haproxy"
)

// The proxy: its Service and HAProxy Deployment, one per proxy transport.
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;create;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;delete

func init() {
	Register(benchv1.TransportProxy, func(c Context) Transport { return proxy{c: c} }, serviceKind, deploymentKind,
		networkPolicyKind)
	RegisterRules(benchv1.TransportProxy, Rules{CarriesPooler: true})
}

const (
	// ProxyComponent is the component label of a proxy transport's objects.
	ProxyComponent = "proxy"
	// proxyRole names them.
	proxyRole = "proxy"
	// proxyProbe is the runner's probe of the proxy's counters.
	proxyProbe = "haproxy"
)

// proxy puts one TCP hop between pgbench and the server: HAProxy in TCP mode next to the server,
// as a cloud TCP load balancer or HAProxy in front of Patroni. libpq's TLS, when asked, passes
// through it to the server.
type proxy struct {
	basic
	c Context
}

func (p proxy) name() string { return p.c.Benchmark.ObjectName(proxyRole, p.c.Spec.Name) }

func (p proxy) host() string { return fmt.Sprintf("%s.%s.svc", p.name(), p.c.Benchmark.Namespace) }

// Peers are the proxy's Service, NetworkPolicy and Deployment; they serve this transport only.
func (p proxy) Peers() ([]Peer, error) {
	dep, err := p.deployment()
	if err != nil {
		return nil, err
	}
	peers := withNetworkPolicy(p.c, p.c.Benchmark, dep, []Peer{{Object: p.service()}})
	return append(peers, Peer{Object: dep, Ready: deploymentReady("the proxy"),
		Created: func() (string, string) {
			return conditions.ReasonProxyCreated, fmt.Sprintf("Started HAProxy %s in TCP mode to %s", p.name(), p.target())
		}}), nil
}

func (p proxy) target() string {
	return net.JoinHostPort(p.c.Server.Host, strconv.Itoa(int(p.c.Server.Port)))
}

func (proxy) FailureReason() string { return conditions.ReasonProxyUnavailable }

func (p proxy) VerifiesServer() bool { return p.c.Spec.EffectiveProxy().SSLMode == "verify-ca" }

// Blame: the proxy's pods that broke leave the proxy unavailable.
func (proxy) Blame(part string) string {
	if part == ProxyComponent {
		return conditions.ReasonProxyUnavailable
	}
	return ""
}

// Hop: the link sits between pgbench and the proxy, as between a client and its load balancer.
func (p proxy) Hop() Hop {
	return Hop{Host: p.host(), Port: haproxy.ListenPort, What: "pgbench → proxy"}
}

func (p proxy) Pod(run *runspec.Run) (specs.Pod, error) {
	pod := libpq(p.c.Server, p.host(), haproxy.ListenPort, string(p.c.Spec.EffectiveProxy().SSLMode))
	p.c.libpqVia(&pod)
	if p.VerifiesServer() {
		withServerCA(&pod, p.c.Server)
	}
	run.Probes = append(run.Probes, runspec.Probe{Name: proxyProbe,
		URL: "http://" + net.JoinHostPort(p.host(), strconv.Itoa(haproxy.StatsPort)) + haproxy.StatsPath})
	run.CPUParts = append(run.CPUParts, runspec.CPUPart{Name: ProxyComponent, Host: p.host(), Port: runspec.PeerCPUPort})
	return pod, nil
}

// Record keeps what the proxy counted while the load ran: the connections it carried, the bytes
// both ways, and the connections to the server that failed.
func (proxy) Record(rep *report.Report, out *benchv1.TransportResult) {
	out.Evidence = nil
	pr := rep.ProbeNamed(proxyProbe)
	if pr == nil {
		return
	}
	before, errBefore := haproxy.ParseCSV(strings.NewReader(pr.Before))
	after, errAfter := haproxy.ParseCSV(strings.NewReader(pr.After))
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
func (proxy) Describe(res *benchv1.TransportResult) string {
	return words(tlsWords(res), "HAProxy (TCP mode)")
}

func (p proxy) meta() metav1.ObjectMeta {
	return specs.OwnedMeta(p.c.Benchmark, p.name(), ProxyComponent, p.c.Spec.Name)
}

// service exposes the proxy's PostgreSQL port, its statistics and its CPU accounting.
func (p proxy) service() *corev1.Service {
	meta := p.meta()
	return &corev1.Service{
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Selector: meta.Labels,
			Ports: []corev1.ServicePort{
				{Name: "postgres", Port: haproxy.ListenPort, TargetPort: intstr.FromInt32(haproxy.ListenPort), Protocol: corev1.ProtocolTCP},
				{Name: "stats", Port: haproxy.StatsPort, TargetPort: intstr.FromInt32(haproxy.StatsPort), Protocol: corev1.ProtocolTCP},
				peerCPUServicePort()},
		},
	}
}

// proxyConfig is where HAProxy reads its configuration, written at start from proxyConfigEnv.
const (
	proxyConfig    = "/tmp/haproxy/haproxy.cfg"
	proxyConfigEnv = "HAPROXY_CONFIG"
	// haproxyBinary is Debian's HAProxy (outside the image's PATH).
	haproxyBinary = "/usr/sbin/haproxy"
)

// deployment runs HAProxy in the foreground next to the server, its configuration (no secret: a
// host and a port) written from the pod spec by `tunnelbench-runner with-file`.
func (p proxy) deployment() (*appsv1.Deployment, error) {
	tb := p.c.Benchmark
	config, err := haproxy.Config{Target: p.target()}.Render()
	if err != nil {
		return nil, fmt.Errorf("transport %s: %w", p.c.Spec.Name, err)
	}
	image, pullPolicy := specs.RunnerImage(tb, p.c.Defaults)
	c := specs.HelperContainer("haproxy", image, pullPolicy, "250m", "32Mi", "256Mi")
	c.Command = []string{"tunnelbench-runner"}
	c.Args = []string{"with-file", "--path=" + proxyConfig, "--from-env=" + proxyConfigEnv, "--", haproxyBinary, "-db", "-f", proxyConfig}
	c.Env = append(c.Env, corev1.EnvVar{Name: proxyConfigEnv, Value: config})
	c.Ports = []corev1.ContainerPort{{Name: "postgres", ContainerPort: haproxy.ListenPort},
		{Name: "stats", ContainerPort: haproxy.StatsPort}}
	// HAProxy's processes are the proxy's part of the path.
	servePeerCPU(&c)
	c.ReadinessProbe = specs.TCPReadiness(haproxy.ListenPort)
	return specs.ServerSideDeployment(tb, p.meta(), c), nil
}
