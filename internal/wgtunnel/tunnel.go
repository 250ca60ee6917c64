package wgtunnel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"
	"golang.zx2c4.com/wireguard/tun/netstack"
)

// End is one end of the tunnel: its own address and key, and its only peer.
type End struct {
	// Addr is this end's address inside the tunnel.
	Addr netip.Addr
	// PrivateKey is this end's key; PeerKey the other end's public key, pinned.
	PrivateKey, PeerKey Key
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
	fmt.Fprintf(&b, "private_key=%s\n", e.PrivateKey.hex())
	if e.ListenPort > 0 {
		fmt.Fprintf(&b, "listen_port=%d\n", e.ListenPort)
	}
	fmt.Fprintf(&b, "public_key=%s\n", e.PeerKey.hex())
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
	tdev, tnet, err := netstack.CreateNetTUN([]netip.Addr{e.Addr}, nil, MTU)
	if err != nil {
		return nil, fmt.Errorf("cannot create the user-space network stack: %w", err)
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
func (t *Tunnel) Counters() (Counters, error) {
	ipc, err := t.dev.IpcGet()
	if err != nil {
		return Counters{}, err
	}
	return parseCounters(ipc), nil
}

// ServeGateway accepts TCP inside the tunnel on the gateway's address and ForwardPort, and
// forwards each connection to target, the server: the one destination the tunnel leads to. It
// returns when ctx ends.
func (t *Tunnel) ServeGateway(ctx context.Context, target string, logf func(string, ...any)) error {
	ln, err := t.net.ListenTCPAddrPort(netip.AddrPortFrom(GatewayAddr, ForwardPort))
	if err != nil {
		return fmt.Errorf("cannot listen inside the tunnel: %w", err)
	}
	d := &targetDialer{target: target}
	return serve(ctx, ln, d.dial, logf)
}

// targetDialer dials the server at the address its name resolved to, resolved once and kept: a
// DNS lookup for every forwarded connection would make each one depend on the cluster's DNS
// answering, and add its time to the connection's. A dial that fails resolves the name again,
// once, for a server whose address moved.
type targetDialer struct {
	target string
	mu     sync.Mutex
	addr   string
	d      net.Dialer
}

func (t *targetDialer) dial(ctx context.Context) (net.Conn, error) {
	addr, err := t.resolved(ctx, false)
	if err != nil {
		return nil, err
	}
	c, err := t.d.DialContext(ctx, "tcp", addr)
	if err == nil {
		return c, nil
	}
	if addr, err = t.resolved(ctx, true); err != nil {
		return nil, err
	}
	return t.d.DialContext(ctx, "tcp", addr)
}

// resolved is the target's host:port with the host's first address, looked up when not known
// yet or when again is set.
func (t *targetDialer) resolved(ctx context.Context, again bool) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.addr != "" && !again {
		return t.addr, nil
	}
	host, port, err := net.SplitHostPort(t.target)
	if err != nil {
		return "", err
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return "", err
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("%s has no address", host)
	}
	t.addr = net.JoinHostPort(addrs[0], port)
	return t.addr, nil
}

// ServeClient accepts TCP on listen (the runner pod's loopback) and carries each connection
// through the tunnel to the gateway's forward. It returns when ctx ends.
func (t *Tunnel) ServeClient(ctx context.Context, listen string, logf func(string, ...any)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", listen)
	if err != nil {
		return err
	}
	remote := netip.AddrPortFrom(GatewayAddr, ForwardPort)
	return serve(ctx, ln, func(ctx context.Context) (net.Conn, error) { return t.net.DialContextTCPAddrPort(ctx, remote) }, logf)
}

// dialTimeout bounds one forwarded connection's dial: libpq's own connect_timeout is longer.
const dialTimeout = 10 * time.Second

// serve accepts on ln until ctx ends and pipes every connection to one dial makes.
func serve(ctx context.Context, ln net.Listener, dial func(context.Context) (net.Conn, error), logf func(string, ...any)) error {
	go func() { <-ctx.Done(); _ = ln.Close() }()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			dctx, cancel := context.WithTimeout(ctx, dialTimeout)
			defer cancel()
			up, err := dial(dctx)
			if err != nil {
				logf("cannot forward a connection from %s: %v", c.RemoteAddr(), err)
				_ = c.Close()
				return
			}
			pipe(c, up)
		}()
	}
}

// halfCloser is a connection whose sending side closes alone.
type halfCloser interface{ CloseWrite() error }

// pipe copies both ways until both sides are done, passing each side's end of stream on.
func pipe(a, b net.Conn) {
	var wg sync.WaitGroup
	one := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if hc, ok := dst.(halfCloser); ok {
			_ = hc.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	wg.Add(2)
	go one(a, b)
	go one(b, a)
	wg.Wait()
	_ = a.Close()
	_ = b.Close()
}
