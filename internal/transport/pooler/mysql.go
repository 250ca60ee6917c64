package pooler

import (
	"net"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/mysqlpool"
)

// The MySQL pooler (implementation mysqlpool): TunnelBench's own. As a native sidecar of the
// runner pod, sysbench reaches it over loopback and its server connections cross the path to the
// server (and the emulated link); placed as a service, it runs next to the server behind a
// Service, and sysbench's connections cross the path to it. Its server connections use TLS as
// serverTLS says. CEL admits it only in transaction mode, with clientTLS disable and no path to go
// over.

const (
	// MySQLPoolerContainer is the MySQL pooler's container: a sidecar of the runner pod, or the
	// shared pooler's.
	MySQLPoolerContainer = "mysqlpool"
	// MySQLPoolerStatsPort is where it serves its counters: on the runner pod's loopback, or on
	// the shared pooler's pod, which only the benchmark's runners reach (its NetworkPolicy).
	MySQLPoolerStatsPort = 14900
	// MySQLPoolerServicePort is the shared MySQL pooler Service's port: MySQL's.
	MySQLPoolerServicePort = 3306
)

func (p pooler) mysql() bool {
	return p.settings().EffectiveImplementation(p.c.Server.Engine) == benchv1.PoolerMySQLPool
}

// mysqlSidecarPod is sysbench connecting over loopback to the MySQL pooler in a native sidecar.
func (p pooler) mysqlSidecarPod(run *runspec.Run) specs.Pod {
	run.Pooler, run.PoolerPart = runspec.PoolerMySQL, MySQLPoolerContainer
	run.PoolerMetrics = net.JoinHostPort("127.0.0.1", strconv.Itoa(MySQLPoolerStatsPort))
	pod := transport.LibPQ(p.c.Server, "127.0.0.1", PoolerListenPort, string(benchv1.ClientTLSDisable))
	host, port := p.c.Dial(p.Hop())
	c, volumes := p.mysqlPooler("127.0.0.1", run.PoolerMetrics, host, port)
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	c.StartupProbe = specs.StartupProbe(PoolerListenPort)
	pod.Sidecars = append(pod.Sidecars, c)
	pod.Volumes = append(pod.Volumes, volumes...)
	return pod
}

// mysqlServicePod is sysbench connecting to the shared MySQL pooler's Service, across the path;
// the runner reads the pooler's counters and CPU there.
func (p pooler) mysqlServicePod(run *runspec.Run) specs.Pod {
	run.Pooler, run.PoolerPart = runspec.PoolerMySQL, PoolerPart
	run.PoolerMetrics = net.JoinHostPort(p.host(), strconv.Itoa(MySQLPoolerStatsPort))
	run.CPUParts = append(run.CPUParts, runspec.CPUPart{Name: PoolerPart, Host: p.host(), Port: runspec.PeerCPUPort})
	pod := transport.LibPQ(p.c.Server, p.host(), MySQLPoolerServicePort, string(benchv1.ClientTLSDisable))
	p.c.LibPQVia(&pod)
	return pod
}

// mysqlDeployment runs the shared MySQL pooler next to the server, as the gateway does.
func (p pooler) mysqlDeployment() *appsv1.Deployment {
	c, volumes := p.mysqlPooler("0.0.0.0", net.JoinHostPort("0.0.0.0", strconv.Itoa(MySQLPoolerStatsPort)),
		p.c.Server.Host, p.c.Server.Port)
	c.Ports = []corev1.ContainerPort{{Name: "mysql", ContainerPort: PoolerListenPort},
		{Name: "stats", ContainerPort: MySQLPoolerStatsPort}}
	c.ReadinessProbe = specs.TCPReadiness(PoolerListenPort)
	transport.ServePeerCPU(&c)
	return specs.ServerSideDeployment(p.c.Benchmark, p.meta(p.name()), c, volumes...)
}

// mysqlServicePorts are the shared MySQL pooler Service's: sysbench's and its counters'.
func mysqlServicePorts() []corev1.ServicePort {
	return []corev1.ServicePort{
		{Name: "mysql", Port: MySQLPoolerServicePort, TargetPort: intstr.FromInt32(PoolerListenPort), Protocol: corev1.ProtocolTCP},
		{Name: "stats", Port: MySQLPoolerStatsPort, TargetPort: intstr.FromInt32(MySQLPoolerStatsPort), Protocol: corev1.ProtocolTCP},
	}
}

// mysqlPooler is the container of `tunnelbench-runner mysqlpool` listening on listenHost, its
// counters on stats, its server connections to serverHost:serverPort, logged in with the
// credentials Secret's user and password by reference; and the volume of the server's CA it
// verifies the server against.
func (p pooler) mysqlPooler(listenHost, stats, serverHost string, serverPort int32) (corev1.Container, []corev1.Volume) {
	s, server := p.settings(), p.c.Server
	settings := mysqlpool.Settings{
		Listen: net.JoinHostPort(listenHost, strconv.Itoa(PoolerListenPort)), Stats: stats,
		Server: net.JoinHostPort(serverHost, strconv.Itoa(int(serverPort))), PoolSize: int(s.PoolSize),
		MaxClients: int(s.MaxClientConnections), ServerTLS: string(s.ServerTLS),
	}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	if p.VerifiesServer() && server.CASecret != "" {
		settings.ServerCAFile = transport.MountServerCA(&volumes, &mounts, server, "pooler-server-ca", PoolerServerCADir)
	}
	image, pullPolicy := specs.RunnerImage(p.c.Benchmark, p.c.Defaults)
	c := specs.HelperContainer(MySQLPoolerContainer, image, pullPolicy, "250m", "32Mi", "256Mi")
	c.Command, c.Args = []string{"tunnelbench-runner"}, append([]string{"mysqlpool"}, settings.Args()...)
	c.Env = append(c.Env,
		specs.SecretEnv("PGUSER", server.CredentialsSecret, server.UsernameKey),
		specs.SecretEnv("PGPASSWORD", server.CredentialsSecret, server.PasswordKey))
	c.VolumeMounts = append(c.VolumeMounts, mounts...)
	return c, volumes
}

// mysqlRecord: sysbench logs in to the pooler with the pool's own password over loopback; the
// pooler logs in to the server with it, over the TLS the server reports for the session.
func (p pooler) mysqlRecord(rep *report.Report) *benchv1.PoolerResult {
	out := &benchv1.PoolerResult{
		Implementation: mysqlpool.Name, Placement: p.settings().Placement, PoolMode: benchv1.PoolModeTransaction,
		ClientHop: benchv1.Hop{Auth: "mysql_native_password (the pooler's)", TLS: "none"},
		ServerHop: benchv1.Hop{Auth: "password", TLS: "none"},
	}
	if rp := rep.Pooler; rp != nil && rp.Counted {
		tx, servers := rp.Transactions, int32(rp.ServerConnections)
		out.Transactions, out.ServerConnections = &tx, &servers
		out.Version = rp.Version
	}
	if rep.TLS != nil {
		out.ServerHop.TLS = rep.TLS.Version + "/" + rep.TLS.Cipher
	}
	return out
}
