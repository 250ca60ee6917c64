package transport

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/pgbouncer"
	"github.com/tunnelbench/tunnelbench/internal/runner"
)

// Ports and paths of the pooler transport.
const (
	// PoolerServicePort is the pooler Service's port: PostgreSQL's, as CloudNativePG's Pooler.
	PoolerServicePort = 5432
	// PoolerListenPort is where the operator's PgBouncer listens, in its pod or in the runner pod.
	PoolerListenPort = 6432
	// PoolerTLSDir holds the pooler's certificate for clients (tls.crt, tls.key).
	PoolerTLSDir = "/etc/tunnelbench/pooler-tls"
	// PoolerServerCADir holds the server's CA, for server TLS verify-full.
	PoolerServerCADir = "/etc/tunnelbench/pooler-server-ca"
)

// PoolerEndpoint is where a pooler transport's shared pooler is reached.
type PoolerEndpoint struct {
	// Name of the pooler's objects (Deployment, Service, TLS Secret, or CloudNativePG Pooler).
	Name string
	// Host is the pooler Service's DNS name.
	Host string
	// CNPG marks a CloudNativePG Pooler, whose admin console the benchmark's user cannot read.
	CNPG bool
	// MetricsHost, for a CloudNativePG Pooler, is the headless Service of its pods' exporters.
	MetricsHost string
}

// PgBouncer is one of the operator's own PgBouncers: its settings (the user comes from the
// credentials Secret at start) and what its container mounts.
type PgBouncer struct {
	Config pgbouncer.Config
	// Env passes the credentials by reference.
	Env     []corev1.EnvVar
	Volumes []corev1.Volume
	Mounts  []corev1.VolumeMount
}

// Args are the container's arguments: `tunnelbench-runner pgbouncer` and the settings.
func (p PgBouncer) Args() []string {
	return append([]string{"pgbouncer"}, p.Config.Args()...)
}

// poolerConnection reaches the server through PgBouncer: the shared one behind its Service, or a
// sidecar on the pod's loopback. libpq's sslmode is the client hop's TLS.
func poolerConnection(server Server, t benchv1.TransportSpec, ep PoolerEndpoint) Connection {
	p := t.EffectivePooler()
	c := base(server, p.ClientTLS)
	host, port := ep.Host, PoolerServicePort
	c.PoolerKind = runner.PoolerPgBouncer
	if p.Placement == benchv1.PoolerSidecar {
		host, port = "127.0.0.1", PoolerListenPort
		sidecar := ownPgBouncer(server, p, "127.0.0.1", pgbouncer.AuthTrust)
		c.Sidecar = &sidecar
	} else if ep.CNPG {
		c.PoolerKind = runner.PoolerOpaque
		if ep.MetricsHost != "" {
			c.PoolerMetrics = fmt.Sprintf("%s:%d", ep.MetricsHost, pgbouncer.CNPGExporterPort)
		}
	}
	for i, e := range c.Env {
		switch e.Name {
		case "PGHOST":
			c.Env[i].Value = host
		case "PGPORT":
			c.Env[i].Value = strconv.Itoa(port)
		}
	}
	return c
}

// ServicePgBouncer is the shared PgBouncer of a pooler transport placed as a service: every client
// logs in with SCRAM, over TLS when clientTLS is require (certificate from tlsSecret).
func ServicePgBouncer(server Server, t benchv1.TransportSpec, tlsSecret string) PgBouncer {
	p := t.EffectivePooler()
	pb := ownPgBouncer(server, p, "0.0.0.0", pgbouncer.AuthSCRAM)
	if p.ClientTLS == "require" {
		pb.Config.ClientTLSCertFile = PoolerTLSDir + "/" + corev1.TLSCertKey
		pb.Config.ClientTLSKeyFile = PoolerTLSDir + "/" + corev1.TLSPrivateKeyKey
		pb.Volumes = append(pb.Volumes, secretVolume("pooler-tls", tlsSecret,
			corev1.KeyToPath{Key: corev1.TLSCertKey, Path: corev1.TLSCertKey},
			corev1.KeyToPath{Key: corev1.TLSPrivateKeyKey, Path: corev1.TLSPrivateKeyKey}))
		pb.Mounts = append(pb.Mounts, corev1.VolumeMount{Name: "pooler-tls", MountPath: PoolerTLSDir, ReadOnly: true})
	}
	return pb
}

// ownPgBouncer is the part of the operator's PgBouncer that does not depend on its placement: the
// server, the pool and the server hop's TLS.
func ownPgBouncer(server Server, p benchv1.PoolerTransport, listen, clientAuth string) PgBouncer {
	pb := PgBouncer{
		Config: pgbouncer.Config{
			ListenAddr: listen, ListenPort: PoolerListenPort, ServerHost: server.Host, ServerPort: int(server.Port),
			ClientAuth: clientAuth, PoolMode: p.PoolMode, PoolSize: int(p.PoolSize), MaxClientConn: int(p.MaxClientConnections),
			ServerTLSMode: p.ServerTLS,
		},
		Env: []corev1.EnvVar{
			secretEnv("PGUSER", server.CredentialsSecret, server.UsernameKey),
			secretEnv("PGPASSWORD", server.CredentialsSecret, server.PasswordKey),
		},
	}
	if p.ServerTLS == "verify-full" && server.CASecret != "" {
		pb.Config.ServerCAFile = PoolerServerCADir + "/ca.crt"
		pb.Volumes = append(pb.Volumes, secretVolume("pooler-server-ca", server.CASecret,
			corev1.KeyToPath{Key: server.CAKey, Path: "ca.crt"}))
		pb.Mounts = append(pb.Mounts, corev1.VolumeMount{Name: "pooler-server-ca", MountPath: PoolerServerCADir, ReadOnly: true})
	}
	return pb
}

// PoolerHosts are the names the pooler's client certificate is valid for: its Service's.
func PoolerHosts(ep PoolerEndpoint, namespace string) []string {
	return []string{ep.Name, fmt.Sprintf("%s.%s", ep.Name, namespace), ep.Host, ep.Host + ".cluster.local"}
}
