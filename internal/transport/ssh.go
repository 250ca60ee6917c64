package transport

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/sshtunnel"
)

// Paths and ports of the ssh transport inside the runner pod.
const (
	// TunnelBasePort is the loopback port of the first tunnel; tunnel i listens on base+i.
	TunnelBasePort = 15432
	// SSHClientDir holds the client key and the pinned known_hosts.
	SSHClientDir = "/etc/tunnelbench/ssh"
	// SSHLogDir is shared by the tunnel sidecars (which write ssh's -v log) and the runner (which
	// reads the negotiated algorithms and the reason a tunnel died).
	SSHLogDir = "/run/tunnelbench/ssh"
)

// Tunnels is what the ssh transport adds to a runner pod: one ssh sidecar per tunnel.
type Tunnels struct {
	Count int
	// Secret holds the key material (sshkeys); each pod mounts only its part.
	Secret string
	// Gateway is the sshd's host name; Target the server's host:port, as the gateway sees it.
	Gateway     string
	GatewayPort int
	Target      string
	Cipher      string
	MAC         string
	Compression bool
	KeepAlive   time.Duration
}

// Tunnel returns the ssh command of tunnel i.
func (t Tunnels) Tunnel(i int) sshtunnel.Tunnel {
	return sshtunnel.Tunnel{
		Gateway: t.Gateway, Port: t.GatewayPort, LocalPort: TunnelBasePort + i, Target: t.Target,
		IdentityFile: SSHClientDir + "/id_ed25519", KnownHostsFile: SSHClientDir + "/known_hosts",
		LogFile: fmt.Sprintf("%s/tunnel-%d.log", SSHLogDir, i), Compression: t.Compression,
		Cipher: t.Cipher, MAC: t.MAC, KeepAlive: t.KeepAlive,
	}
}

// SSHGateway is the gateway a benchmark's ssh transports share.
type SSHGateway struct {
	// Name of its Deployment, Service and key Secret.
	Name string
	// Host is the Service's DNS name.
	Host string
}

// sshConnection reaches the server through tunnels: pgbench connects to the tunnels' loopback
// ends, and the gateway forwards to the server's host and port (in-cluster TCP, as in a hand-run
// `ssh -L` study where the tunnel ended next to the database). sslmode applies inside the tunnel.
func sshConnection(server Server, t benchv1.TransportSpec, gw SSHGateway) Connection {
	spec := t.SSH
	if spec == nil {
		spec = &benchv1.SSHTransport{}
	}
	sslMode := spec.SSLMode
	if sslMode == "" {
		sslMode = "disable"
	}
	c := base(server, sslMode)
	for i, e := range c.Env {
		switch e.Name {
		case "PGHOST":
			c.Env[i].Value = "127.0.0.1"
		case "PGPORT":
			c.Env[i].Value = strconv.Itoa(TunnelBasePort)
		}
	}
	if sslMode == "verify-ca" && server.CASecret != "" {
		c.Volumes = append(c.Volumes, secretVolume("server-ca", server.CASecret,
			corev1.KeyToPath{Key: server.CAKey, Path: "ca.crt"}))
		c.Mounts = append(c.Mounts, corev1.VolumeMount{Name: "server-ca", MountPath: CADir, ReadOnly: true})
		c.Env = append(c.Env, corev1.EnvVar{Name: "PGSSLROOTCERT", Value: CADir + "/ca.crt"})
	}
	c.Volumes = append(c.Volumes,
		secretVolume("ssh-client", gw.Name,
			corev1.KeyToPath{Key: "id_ed25519", Path: "id_ed25519"},
			corev1.KeyToPath{Key: "known_hosts", Path: "known_hosts"}),
		corev1.Volume{Name: "ssh-logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	c.Mounts = append(c.Mounts,
		corev1.VolumeMount{Name: "ssh-client", MountPath: SSHClientDir, ReadOnly: true},
		corev1.VolumeMount{Name: "ssh-logs", MountPath: SSHLogDir})
	keepAlive := 10 * time.Second
	if spec.KeepAliveInterval != nil {
		keepAlive = spec.KeepAliveInterval.Duration
	}
	c.Tunnels = &Tunnels{
		Count: spec.EffectiveTunnels(), Secret: gw.Name, Gateway: gw.Host, GatewayPort: sshtunnel.GatewayPort,
		Target: fmt.Sprintf("%s:%d", server.Host, server.Port), Cipher: spec.Cipher, MAC: spec.MAC,
		Compression: spec.Compression, KeepAlive: keepAlive,
	}
	return c
}
