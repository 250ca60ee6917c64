package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/transport/proxy"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn/wgtunnel"

	// The proxy links the transport registry: every type is linked with it.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/transports"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn/wgtunnel/userspace"
)

// startWireGuard runs both ends of the vpn transport's tunnel in this process, the gateway
// forwarding to the server, and returns the client's loopback port.
func startWireGuard(srv *pgtest.Server) (int, func(), error) {
	var keys [4]wgtunnel.Key
	for i := 0; i < 4; i += 2 {
		priv, err := wgtunnel.GenerateKey()
		if err != nil {
			return 0, nil, err
		}
		pub, err := priv.Public()
		if err != nil {
			return 0, nil, err
		}
		keys[i], keys[i+1] = priv, pub
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	gwPort := udp.LocalAddr().(*net.UDPAddr).Port
	_ = udp.Close()
	clientAddr, err := wgtunnel.ClientAddr()
	if err != nil {
		return 0, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	quiet := func(string, ...any) {}
	gw, err := userspace.End{Addr: wgtunnel.GatewayAddr, Peer: wgtunnel.ClientPrefix, PrivateKey: keys[0], PeerKey: keys[3],
		ListenPort: gwPort}.Start()
	if err != nil {
		cancel()
		return 0, nil, err
	}
	go func() { _ = gw.ServeGateway(ctx, net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)), quiet) }()
	cl, err := userspace.End{Addr: clientAddr, Peer: netip.PrefixFrom(wgtunnel.GatewayAddr, 32), PrivateKey: keys[2],
		PeerKey: keys[1], Endpoint: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(gwPort)),
		KeepAlive: 10 * time.Second}.Start()
	if err != nil {
		cancel()
		gw.Close()
		return 0, nil, err
	}
	port, err := loopback.FreePort()
	if err != nil {
		cancel()
		return 0, nil, err
	}
	go func() { _ = cl.ServeClient(ctx, "127.0.0.1:"+strconv.Itoa(port), quiet) }()
	stop := func() { cancel(); cl.Close(); gw.Close() }
	return port, stop, waitListening(port)
}

// startHAProxy runs Debian's HAProxy with the proxy transport's configuration in front of the
// server, and returns its port.
func startHAProxy(srv *pgtest.Server) (int, func(), error) {
	port, err := loopback.FreePort()
	if err != nil {
		return 0, nil, err
	}
	stats, err := loopback.FreePort()
	if err != nil {
		return 0, nil, err
	}
	text, err := proxy.Config{Target: net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)), Port: port, StatsPort: stats}.Render()
	if err != nil {
		return 0, nil, err
	}
	dir, err := os.MkdirTemp("", "bench-haproxy-")
	if err != nil {
		return 0, nil, err
	}
	cfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		return 0, nil, err
	}
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		bin = "/usr/sbin/haproxy"
	}
	cmd := exec.Command(bin, "-db", "-f", cfg)
	if err := cmd.Start(); err != nil {
		return 0, nil, fmt.Errorf("cannot start HAProxy (hack/deps.sh installs it): %w", err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = os.RemoveAll(dir) }
	return port, stop, waitListening(port)
}

// waitListening waits until a loopback port accepts connections.
func waitListening(port int) error {
	for range 100 {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			_ = c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on port %d", port)
}
