package pooler

import (
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/mysqlpool"
)

// The MySQL pooler (implementation mysqlpool): TunnelBench's own, a native sidecar of the runner
// pod. sysbench reaches it over loopback; its server connections cross the path to the server
// (and the emulated link), over TLS as serverTLS says. CEL admits it only as a sidecar in
// transaction mode, with no path to go over.

const (
	// MySQLPoolerContainer is the MySQL pooler's sidecar in the runner pod.
	MySQLPoolerContainer = "mysqlpool"
	// MySQLPoolerStatsPort is where it serves its counters, on the pod's loopback.
	MySQLPoolerStatsPort = 14900
)

func (p pooler) mysql() bool {
	return p.settings().EffectiveImplementation(p.c.Server.Engine) == benchv1.PoolerMySQLPool
}

// mysqlSidecarPod is sysbench connecting over loopback to the MySQL pooler in a native sidecar.
func (p pooler) mysqlSidecarPod(run *runspec.Run) specs.Pod {
	s, server := p.settings(), p.c.Server
	run.Pooler, run.PoolerPart = runspec.PoolerMySQL, MySQLPoolerContainer
	run.PoolerMetrics = net.JoinHostPort("127.0.0.1", strconv.Itoa(MySQLPoolerStatsPort))
	pod := transport.LibPQ(server, "127.0.0.1", PoolerListenPort, string(benchv1.ClientTLSDisable))
	host, port := p.c.Dial(p.Hop())
	settings := mysqlpool.Settings{
		Listen: net.JoinHostPort("127.0.0.1", strconv.Itoa(PoolerListenPort)), Stats: run.PoolerMetrics,
		Server: net.JoinHostPort(host, strconv.Itoa(int(port))), PoolSize: int(s.PoolSize),
		MaxClients: int(s.MaxClientConnections), ServerTLS: string(s.ServerTLS),
	}
	var mounts []corev1.VolumeMount
	if p.VerifiesServer() && server.CASecret != "" {
		settings.ServerCAFile = transport.MountServerCA(&pod.Volumes, &mounts, server, "pooler-server-ca", PoolerServerCADir)
	}
	image, pullPolicy := specs.RunnerImage(p.c.Benchmark, p.c.Defaults)
	c := specs.HelperContainer(MySQLPoolerContainer, image, pullPolicy, "250m", "32Mi", "256Mi")
	c.Command, c.Args = []string{"tunnelbench-runner"}, append([]string{"mysqlpool"}, settings.Args()...)
	c.Env = append(c.Env,
		specs.SecretEnv("PGUSER", server.CredentialsSecret, server.UsernameKey),
		specs.SecretEnv("PGPASSWORD", server.CredentialsSecret, server.PasswordKey))
	c.VolumeMounts = append(c.VolumeMounts, mounts...)
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	c.StartupProbe = specs.StartupProbe(PoolerListenPort)
	pod.Sidecars = append(pod.Sidecars, c)
	return pod
}

// mysqlRecord: sysbench logs in to the pooler with the pool's own password over loopback; the
// pooler logs in to the server with it, over the TLS the server reports for the session.
func (p pooler) mysqlRecord(rep *report.Report) *benchv1.PoolerResult {
	out := &benchv1.PoolerResult{
		Implementation: mysqlpool.Name, Placement: benchv1.PoolerSidecar, PoolMode: benchv1.PoolModeTransaction,
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
