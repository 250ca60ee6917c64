// Package userspace runs the two ends of the vpn transport's WireGuard tunnel (package wgtunnel
// holds their contract): wireguard-go over gVisor's netstack, in the runner's pods only.
package userspace

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"
	"golang.zx2c4.com/wireguard/tun/netstack"

	"github.com/tunnelbench/tunnelbench/internal/transport/forward"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn/wgtunnel"
)

// End is one end of the tunnel: its own address and key, and its only peer.
type End struct {
	// Addr is this end's address inside the tunnel.
	Addr netip.Addr
	// PrivateKey is this end's key; PeerKey the other end's public key, pinned.
	PrivateKey, PeerKey wgtunnel.Key
	// Peer holds the only addresses this end exchanges with the peer (allowed_ip): the gateway's
	// on the client, ClientPrefix on the gateway.
	Peer netip.Prefix
	// ListenPort is the UDP port to listen on: ListenPort on the gateway, 0 (any) on the client.
	ListenPort int
	// Endpoint, on the client, is where the gateway is; the gateway learns the client's from its
	// handshakes.
	Endpoint netip.AddrPort
	// KeepAlive, when positive, sends a keepalive this often (the client's, through NAT and
	// kube-proxy's conntrack).
	KeepAlive time.Duration
	// Verbose logs wireguard-go's handshakes.
	Verbose bool
}

// config is the end's setting in wireguard-go's configuration protocol.
func (e End) config() string {
	var b strings.Builder
	fmt.Fprintf(&b, "private_key=%s\n", e.PrivateKey.Hex())
	if e.ListenPort > 0 {
		fmt.Fprintf(&b, "listen_port=%d\n", e.ListenPort)
	}
	fmt.Fprintf(&b, "public_key=%s\n", e.PeerKey.Hex())
	if e.Endpoint.IsValid() {
		fmt.Fprintf(&b, "endpoint=%s\n", e.Endpoint)
	}
	if e.KeepAlive > 0 {
		fmt.Fprintf(&b, "persistent_keepalive_interval=%d\n", int(e.KeepAlive.Seconds()))
	}
	fmt.Fprintf(&b, "allowed_ip=%s\n", e.Peer.Masked())
	return b.String()
}

// Tunnel is a running end: a WireGuard device over its own TCP/IP stack.
type Tunnel struct {
	dev *device.Device
	net *netstack.Net
}

// Start brings the end up.
func (e End) Start() (*Tunnel, error) {
	if !e.Addr.IsValid() || !e.Peer.IsValid() {
		return nil, errors.New("the tunnel's addresses are not set")
	}
	tdev, tnet, err := netstack.CreateNetTUN([]netip.Addr{e.Addr}, nil, wgtunnel.MTU)
	if err != nil {
		return nil, fmt.Errorf("cannot create the user-space network stack: %w", err)
	}
	if err := setTimeWait(tnet, TimeWait); err != nil {
		_ = tdev.Close()
		return nil, err
	}
	level := device.LogLevelError
	if e.Verbose {
		level = device.LogLevelVerbose
	}
	dev := device.NewDevice(tdev, conn.NewDefaultBind(), device.NewLogger(level, "wireguard: "))
	if err := dev.IpcSet(e.config()); err != nil {
		dev.Close()
		return nil, fmt.Errorf("cannot configure WireGuard: %w", err)
	}
	if err := dev.Up(); err != nil {
		dev.Close()
		return nil, fmt.Errorf("cannot bring WireGuard up: %w", err)
	}
	return &Tunnel{dev: dev, net: tnet}, nil
}

// Close takes the end down.
func (t *Tunnel) Close() { t.dev.Close() }

// Counters reads what the end counted of its peer.
func (t *Tunnel) Counters() (wgtunnel.Counters, error) {
	ipc, err := t.dev.IpcGet()
	if err != nil {
		return wgtunnel.Counters{}, err
	}
	return wgtunnel.ParseCounters(ipc), nil
}

// ServeGateway accepts TCP inside the tunnel on the gateway's address and ForwardPort, and
// forwards each connection to target, the server: the one destination the tunnel leads to. It
// returns when ctx ends.
func (t *Tunnel) ServeGateway(ctx context.Context, target string, logf func(string, ...any)) error {
	ln, err := t.net.ListenTCPAddrPort(netip.AddrPortFrom(wgtunnel.GatewayAddr, wgtunnel.ForwardPort))
	if err != nil {
		return fmt.Errorf("cannot listen inside the tunnel: %w", err)
	}
	d := &forward.TargetDialer{Target: target}
	return forward.Serve(ctx, ln, d.Dial, logf)
}

// ServeClient accepts TCP on listen (the runner pod's loopback) and carries each connection
// through the tunnel to the gateway's forward. It returns when ctx ends.
func (t *Tunnel) ServeClient(ctx context.Context, listen string, logf func(string, ...any)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", listen)
	if err != nil {
		return err
	}
	remote := netip.AddrPortFrom(wgtunnel.GatewayAddr, wgtunnel.ForwardPort)
	return forward.Serve(ctx, ln, func(ctx context.Context) (net.Conn, error) { return t.net.DialContextTCPAddrPort(ctx, remote) }, logf)
}
