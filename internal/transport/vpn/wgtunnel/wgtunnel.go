// Package wgtunnel is the contract of the vpn transport's WireGuard tunnel: what the operator and
// both ends share (addresses, ports, the Secret's keys, the counters). The ends themselves run in
// package userspace (wireguard-go over gVisor's netstack, in user space, so neither end needs a TUN
// device or any capability and both pods stay restricted), which only the runner links. The gateway
// next to the server accepts TCP inside the tunnel on one address and forwards it to the server
// only; the client in the runner pod listens on loopback and carries each connection into the
// tunnel. Keys are pinned on both sides: each end knows the other's public key and nothing else is
// a peer.
package wgtunnel

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/crypto/curve25519"
)

// The tunnel's own addresses (inside the tunnel, never routed anywhere else).
var (
	// GatewayAddr is the gateway's address inside the tunnel: the only one the client may reach.
	GatewayAddr = netip.MustParseAddr("10.201.0.1")
	// ClientPrefix holds the clients' addresses: each runner pod takes one of its own
	// (ClientAddr), so that the connections of a pod never meet those of the pod before it, which
	// the gateway's network stack may still hold in TIME_WAIT for a minute: a new pod's network
	// stack picks its ports afresh, and a connection on a port still waiting from the same address
	// is refused (seen in a 300-connection storm right after another vpn run).
	ClientPrefix = netip.MustParsePrefix("10.201.0.0/24")
)

// ClientAddr is a client address of ClientPrefix, at random: neither the network's, the
// gateway's nor the broadcast address.
func ClientAddr() (netip.Addr, error) {
	var b [1]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return netip.Addr{}, err
		}
		if b[0] > 1 && b[0] < 255 {
			a := ClientPrefix.Addr().As4()
			a[3] = b[0]
			return netip.AddrFrom4(a), nil
		}
	}
}

const (
	// ListenPort is the gateway's UDP port.
	ListenPort = 51820
	// ForwardPort is the port inside the tunnel the gateway forwards to the server.
	ForwardPort = 5432
	// MTU leaves room for WireGuard's 80 bytes of IPv6 and UDP overhead inside a 1500-byte link,
	// as wg-quick's default does.
	MTU = 1420
)

// Secret keys of the tunnel's Secret: each end mounts its own private key and the other's public
// key.
const (
	GatewayPrivateKey = "gateway.key"
	GatewayPublicKey  = "gateway.pub"
	ClientPrivateKey  = "client.key"
	ClientPublicKey   = "client.pub"
)

// Key is a Curve25519 key, as WireGuard uses them.
type Key [32]byte

// GenerateKey makes a private key, clamped as RFC 7748 (and wg genkey) does.
func GenerateKey() (Key, error) {
	var k Key
	if _, err := rand.Read(k[:]); err != nil {
		return k, err
	}
	k[0] &= 248
	k[31] = (k[31] & 127) | 64
	return k, nil
}

// Public is the private key's public key.
func (k Key) Public() (Key, error) {
	var p Key
	pub, err := curve25519.X25519(k[:], curve25519.Basepoint)
	if err != nil {
		return p, err
	}
	copy(p[:], pub)
	return p, nil
}

// String is the key in base64, as wg(8) prints it.
func (k Key) String() string { return base64.StdEncoding.EncodeToString(k[:]) }

// Hex is the key as wireguard-go's configuration protocol reads it.
func (k Key) Hex() string { return hex.EncodeToString(k[:]) }

// ParseKey reads a key in base64, surrounding space ignored.
func ParseKey(s string) (Key, error) {
	var k Key
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != len(k) {
		return k, fmt.Errorf("not a WireGuard key (32 bytes in base64)")
	}
	copy(k[:], b)
	return k, nil
}

// SecretData is a new pair of key pairs, for the tunnel's Secret.
func SecretData() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, names := range [][2]string{{GatewayPrivateKey, GatewayPublicKey}, {ClientPrivateKey, ClientPublicKey}} {
		priv, err := GenerateKey()
		if err != nil {
			return nil, err
		}
		pub, err := priv.Public()
		if err != nil {
			return nil, err
		}
		out[names[0]], out[names[1]] = []byte(priv.String()), []byte(pub.String())
	}
	return out, nil
}

// Counters are what the client's end of the tunnel counted, from wireguard-go's own state.
type Counters struct {
	// RxBytes and TxBytes are the bytes received from and sent to the peer, WireGuard's
	// overhead included.
	RxBytes int64 `json:"rxBytes"`
	TxBytes int64 `json:"txBytes"`
	// LastHandshakeUnix is when the last handshake completed, 0 before the first one.
	LastHandshakeUnix int64 `json:"lastHandshakeUnix"`
	// Endpoint is the peer's address as the tunnel reached it.
	Endpoint string `json:"endpoint"`
}

// ParseCounters reads the peer's counters from wireguard-go's configuration protocol ("get").
func ParseCounters(ipc string) Counters {
	var c Counters
	for _, line := range strings.Split(ipc, "\n") {
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(value, 10, 64)
		switch key {
		case "rx_bytes":
			c.RxBytes += n
		case "tx_bytes":
			c.TxBytes += n
		case "last_handshake_time_sec":
			c.LastHandshakeUnix = max(c.LastHandshakeUnix, n)
		case "endpoint":
			c.Endpoint = value
		}
	}
	return c
}
