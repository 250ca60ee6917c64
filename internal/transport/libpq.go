package transport

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// Server is a server's endpoint resolved from spec.server.
type Server struct {
	// Engine is the server's engine (spec.server.engine, applied).
	Engine   benchv1.Engine
	Host     string
	Port     int32
	Database string

	// CredentialsSecret holds the user name and password under UsernameKey and PasswordKey.
	CredentialsSecret string
	UsernameKey       string
	PasswordKey       string

	// CASecret, when set, holds the server's certificate authority under CAKey.
	CASecret string
	CAKey    string

	// Pod is the pod behind the server's Service, resolved before each run only for a transport
	// that dials it (DialsServerPod).
	Pod ServerPod
}

// ServerPod is the pod behind the server's Service as its EndpointSlice lists it.
type ServerPod struct {
	Name string
	IP   string
	Port int32
}

// DialsServerPod is a transport that connects to the pod behind the server's Service rather than
// to the Service: the reconciler resolves Server.Pod for it before each run.
type DialsServerPod interface {
	DialsServerPod() bool
}

// NeedsServerPod reports whether any transport of the benchmark dials the server's pod.
func NeedsServerPod(tb *benchv1.TunnelBenchmark, server Server) bool {
	for _, t := range tb.Spec.Transports {
		tr, err := For(Context{Benchmark: tb, Spec: t, Server: server})
		if d, ok := tr.(DialsServerPod); err == nil && ok && d.DialsServerPod() {
			return true
		}
	}
	return false
}

// Endpoint renders the server as host:port/database.
func (s Server) Endpoint() string {
	return fmt.Sprintf("%s:%d/%s", s.Host, s.Port, s.Database)
}

// Paths inside the runner container where Secrets are mounted.
const (
	CADir         = "/etc/tunnelbench/server-ca"
	ClientCertDir = "/etc/tunnelbench/client-cert"
	// connectTimeoutSeconds bounds each libpq connection attempt, so an unreachable server fails
	// the run instead of hanging it.
	connectTimeoutSeconds = "10"
)

// LibPQ returns the settings every path shares, pointed at host:port: the database, the
// credentials by reference, an explicit sslmode (a transport never silently falls back) and the
// connect timeout.
func LibPQ(server Server, host string, port int32, sslMode string) specs.Pod {
	return specs.Pod{Env: []corev1.EnvVar{
		{Name: "PGHOST", Value: host},
		{Name: "PGPORT", Value: strconv.Itoa(int(port))},
		{Name: "PGDATABASE", Value: server.Database},
		specs.SecretEnv("PGUSER", server.CredentialsSecret, server.UsernameKey),
		specs.SecretEnv("PGPASSWORD", server.CredentialsSecret, server.PasswordKey),
		{Name: "PGSSLMODE", Value: sslMode},
		{Name: "PGCONNECT_TIMEOUT", Value: connectTimeoutSeconds},
	}}
}

// ToServer is libpq's settings straight to the server.
func ToServer(server Server, sslMode string) specs.Pod {
	return LibPQ(server, server.Host, server.Port, sslMode)
}

// ForInit returns the runner pod of the `pgbench -i` run: a direct path that still uses TLS when
// the server insists on it (sslmode=prefer), since initialization measures nothing. To a MySQL
// server, plain: sysbench's TLS needs a client certificate that a direct path has not.
func ForInit(server Server) specs.Pod {
	if server.Engine == benchv1.EngineMySQL {
		return ToServer(server, "disable")
	}
	return ToServer(server, "prefer")
}

// WithServerCA mounts the server's CA for libpq to verify the server against.
func WithServerCA(p *specs.Pod, server Server) {
	if server.CASecret == "" {
		return
	}
	p.Env = append(p.Env, corev1.EnvVar{Name: "PGSSLROOTCERT", Value: MountServerCA(&p.Volumes, &p.Mounts, server, "server-ca", CADir)})
}

// MountServerCA adds the server's CA, from its Secret, as dir/ca.crt and returns that path.
func MountServerCA(volumes *[]corev1.Volume, mounts *[]corev1.VolumeMount, server Server, volume, dir string) string {
	*volumes = append(*volumes, specs.SecretVolume(volume, server.CASecret, corev1.KeyToPath{Key: server.CAKey, Path: "ca.crt"}))
	*mounts = append(*mounts, corev1.VolumeMount{Name: volume, MountPath: dir, ReadOnly: true})
	return dir + "/ca.crt"
}

// ConnInfo renders libpq's settings as a connection string without user or password.
func ConnInfo(env []corev1.EnvVar) string {
	keys := []struct{ env, key string }{
		{"PGHOST", "host"}, {"PGHOSTADDR", "hostaddr"}, {"PGPORT", "port"}, {"PGDATABASE", "dbname"}, {"PGSSLMODE", "sslmode"},
		{"PGSSLROOTCERT", "sslrootcert"}, {"PGSSLCERT", "sslcert"},
	}
	var parts []string
	for _, k := range keys {
		for _, e := range env {
			if e.Name == k.env && e.ValueFrom == nil {
				parts = append(parts, k.key+"="+e.Value)
			}
		}
	}
	return strings.Join(parts, " ")
}
