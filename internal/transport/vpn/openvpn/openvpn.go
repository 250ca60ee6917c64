// Package openvpn runs the two ends of the vpn transport's OpenVPN tunnel (vpn.kind openvpn), as
// the MySQL study ran it: Debian's openvpn in TLS mode over UDP, a TUN device at each end. The
// gateway next to the server is an OpenVPN server whose only service inside the tunnel is a
// forward to the database server; the client, a sidecar of the runner pod, routes the tunnel's
// subnet into its TUN device, so pgbench connects to the gateway's tunnel address with no
// user-space hop on its side. Both ends hold certificates of a CA the operator makes per
// benchmark; the client pins the gateway's name. A TUN device and NET_ADMIN make these pods
// privileged: the operator runs them only where its administrator allowed it.
package openvpn

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/transport/pki"
)

// The tunnel's own addresses (inside the tunnel, never routed anywhere else).
var (
	// Subnet is the tunnel's: the gateway takes its first address, each client one of the pool.
	Subnet = netip.MustParsePrefix("10.202.0.0/24")
	// GatewayAddr is the gateway's address inside the tunnel, where it forwards to the server.
	GatewayAddr = netip.MustParseAddr("10.202.0.1")
)

const (
	// ListenPort is the gateway's UDP port (OpenVPN's).
	ListenPort = 1194
	// ForwardPort is the port on GatewayAddr the gateway forwards to the server.
	ForwardPort = 5432
)

// Secret keys of the tunnel's Secret: the CA's certificate, and a certificate and key for each
// end (each end mounts the CA and its own).
const (
	CACert      = "ca.crt"
	GatewayCert = "gateway.crt"
	GatewayKey  = "gateway.key"
	ClientCert  = "client.crt"
	ClientKey   = "client.key"
)

// certValidity outlives any benchmark (a benchmark ends within the operator's max timeout).
const certValidity = 30 * 24 * time.Hour

// SecretData is a new CA with a certificate for the gateway, named gatewayName (which the client
// pins), and one for the clients.
func SecretData(gatewayName string) (map[string][]byte, error) {
	ca, err := pki.NewCA("tunnelbench openvpn "+gatewayName, certValidity)
	if err != nil {
		return nil, err
	}
	gateway, err := ca.Issue(gatewayName, nil, certValidity)
	if err != nil {
		return nil, err
	}
	client, err := ca.Issue("tunnelbench-runner", nil, certValidity)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		CACert:      ca.CertPEM,
		GatewayCert: gateway.CertPEM, GatewayKey: gateway.KeyPEM,
		ClientCert: client.CertPEM, ClientKey: client.KeyPEM,
	}, nil
}

// End is one end of the tunnel.
type End struct {
	// Gateway is the server end; otherwise a client.
	Gateway bool
	// KeyDir holds the CA's certificate and this end's certificate and key.
	KeyDir string
	// Remote is the gateway's host:port, on a client.
	Remote string
	// GatewayName is the name in the gateway's certificate, which a client pins.
	GatewayName string
	// RunDir is where the end writes its configuration and its management socket.
	RunDir string
}

// ManagementSocket is where OpenVPN's management interface listens (a Unix socket: nothing else
// in the pod can reach it).
func (e End) ManagementSocket() string { return filepath.Join(e.RunDir, "management.sock") }

// Config is the end's OpenVPN configuration. Both ends: UDP, TLS with certificates of the
// benchmark's CA (ECDHE only, no Diffie-Hellman file), OpenVPN 2.6's default data ciphers
// negotiated (AES-256-GCM first), no compression, no data channel offload (the kernel module is
// rarely there; the study's OpenVPN ran in user space too), privileges dropped after the device
// is up, timestamps left to the pod's log.
func (e End) Config() string {
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line("dev tun")
	line("proto udp")
	line("ca %s", filepath.Join(e.KeyDir, CACert))
	line("disable-dco")
	line("persist-tun")
	line("persist-key")
	line("user nobody")
	line("group nogroup")
	line("verb 3")
	line("suppress-timestamps")
	line("management %s unix", e.ManagementSocket())
	if e.Gateway {
		line("port %d", ListenPort)
		line("topology subnet")
		line("server %s %s", Subnet.Addr(), netmask(Subnet))
		line("dh none")
		line("cert %s", filepath.Join(e.KeyDir, GatewayCert))
		line("key %s", filepath.Join(e.KeyDir, GatewayKey))
		line("remote-cert-tls client")
		// Every runner pod holds the same client certificate; each gets its own address.
		line("duplicate-cn")
		line("keepalive 10 60")
		return b.String()
	}
	host, port, _ := strings.Cut(e.Remote, ":")
	line("client")
	line("nobind")
	line("remote %s %s udp", host, port)
	line("cert %s", filepath.Join(e.KeyDir, ClientCert))
	line("key %s", filepath.Join(e.KeyDir, ClientKey))
	line("remote-cert-tls server")
	line("verify-x509-name %s name", e.GatewayName)
	// A gateway that is not up yet is tried again, every few seconds, for as long as the pod runs.
	line("connect-retry 2 5")
	line("resolv-retry infinite")
	return b.String()
}

// netmask is the prefix's mask in dotted form, as OpenVPN's server directive takes it.
func netmask(p netip.Prefix) string {
	bits := p.Bits()
	var m [4]byte
	for i := range m {
		n := min(max(bits-8*i, 0), 8)
		m[i] = byte(0xff << (8 - n))
	}
	return netip.AddrFrom4(m).String()
}
