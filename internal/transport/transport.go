package transport

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// Server is a PostgreSQL endpoint resolved from spec.server.
type Server struct {
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
}

// Endpoint renders the server as host:port/database.
func (s Server) Endpoint() string {
	return fmt.Sprintf("%s:%d/%s", s.Host, s.Port, s.Database)
}

// Connection is what a runner container needs to reach the server through one transport.
type Connection struct {
	// SSLMode is libpq's sslmode, always explicit so that a transport never silently falls back.
	SSLMode string
	Env     []corev1.EnvVar
	Volumes []corev1.Volume
	Mounts  []corev1.VolumeMount
	// Tunnels, for the ssh transport, are the tunnels pgbench connects through.
	Tunnels *Tunnels
	// PoolerKind, for the pooler transport, tells the runner what is between it and the server
	// (runner.PoolerPgBouncer or runner.PoolerOpaque).
	PoolerKind string
	// PoolerMetrics, for a CloudNativePG Pooler, is host:port of its pods' exporters.
	PoolerMetrics string
	// Sidecar, for the pooler transport placed as a sidecar, is the PgBouncer next to pgbench.
	Sidecar *PgBouncer
}

// Peers are the objects a benchmark's transports connect through.
type Peers struct {
	// Gateway is the benchmark's SSH gateway, for ssh transports.
	Gateway SSHGateway
	// Pooler is the transport's shared pooler, for a pooler transport placed as a service.
	Pooler PoolerEndpoint
	// ClientCertSecret holds the client certificate issued for a TLS transport's
	// tls.clientCertificate.
	ClientCertSecret string
}

// Paths inside the runner container where Secrets are mounted.
const (
	CADir         = "/etc/tunnelbench/server-ca"
	ClientCertDir = "/etc/tunnelbench/client-cert"
	// connectTimeoutSeconds bounds each libpq connection attempt, so an unreachable server fails
	// the run instead of hanging it.
	connectTimeoutSeconds = "10"
)

// For returns the connection of a transport through its peers.
func For(server Server, t benchv1.TransportSpec, peers Peers) (Connection, error) {
	switch t.Type {
	case benchv1.TransportDirect:
		return direct(server), nil
	case benchv1.TransportTLS:
		return tlsConnection(server, t, peers.ClientCertSecret), nil
	case benchv1.TransportSSH:
		return sshConnection(server, t, peers.Gateway), nil
	case benchv1.TransportPooler:
		return poolerConnection(server, t, peers.Pooler), nil
	default:
		return Connection{}, fmt.Errorf("transport %q: unsupported type %q", t.Name, t.Type)
	}
}

// ForInit returns the connection of the `pgbench -i` run: a direct path that still uses TLS when
// the server insists on it (sslmode=prefer), since initialization measures nothing.
func ForInit(server Server) Connection {
	return base(server, "prefer")
}

// base sets the settings every transport shares: endpoint, credentials and timeouts.
func base(server Server, sslMode string) Connection {
	return Connection{
		SSLMode: sslMode,
		Env: []corev1.EnvVar{
			{Name: "PGHOST", Value: server.Host},
			{Name: "PGPORT", Value: strconv.Itoa(int(server.Port))},
			{Name: "PGDATABASE", Value: server.Database},
			secretEnv("PGUSER", server.CredentialsSecret, server.UsernameKey),
			secretEnv("PGPASSWORD", server.CredentialsSecret, server.PasswordKey),
			{Name: "PGSSLMODE", Value: sslMode},
			{Name: "PGCONNECT_TIMEOUT", Value: connectTimeoutSeconds},
		},
	}
}

// ConnInfo renders the connection as a libpq connection string without user or password.
func (c Connection) ConnInfo() string {
	keys := []struct{ env, key string }{
		{"PGHOST", "host"}, {"PGPORT", "port"}, {"PGDATABASE", "dbname"}, {"PGSSLMODE", "sslmode"},
		{"PGSSLROOTCERT", "sslrootcert"}, {"PGSSLCERT", "sslcert"},
	}
	var parts []string
	for _, k := range keys {
		for _, e := range c.Env {
			if e.Name == k.env && e.ValueFrom == nil {
				parts = append(parts, k.key+"="+e.Value)
			}
		}
	}
	return strings.Join(parts, " ")
}

func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key,
	}}}
}

// secretVolume mounts selected keys of a Secret read-only. Mode 0440 with the pod's fsGroup keeps
// private keys acceptable to libpq, which refuses key files readable by others.
func secretVolume(name, secret string, items ...corev1.KeyToPath) corev1.Volume {
	mode := int32(0o440)
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, Items: items, DefaultMode: &mode,
	}}}
}
