package userspace

import (
	"context"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn/wgtunnel"
)

func keyPair(t *testing.T) (wgtunnel.Key, wgtunnel.Key) {
	t.Helper()
	priv, err := wgtunnel.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := priv.Public()
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

// freeUDPPort is a loopback UDP port nobody uses right now.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// echoServer stands in for the server: it echoes (first 0) or answers and closes first.
func echoServer(t *testing.T, first int) string {
	t.Helper()
	addr, stop, err := loopback.Echo(first)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// tunnel starts a gateway forwarding to target and a client whose peer key is clientPeer, and
// returns the client's loopback address and tunnel.
func tunnel(t *testing.T, target string, clientPeer func(gatewayPub wgtunnel.Key) wgtunnel.Key) (string, *Tunnel) {
	t.Helper()
	gwPriv, gwPub := keyPair(t)
	clPriv, clPub := keyPair(t)
	port := freeUDPPort(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	gw, err := End{Addr: wgtunnel.GatewayAddr, Peer: wgtunnel.ClientPrefix, PrivateKey: gwPriv, PeerKey: clPub, ListenPort: port}.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	go func() { _ = gw.ServeGateway(ctx, target, t.Logf) }()
	clientAddr, err := wgtunnel.ClientAddr()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := End{Addr: clientAddr, Peer: netip.PrefixFrom(wgtunnel.GatewayAddr, 32), PrivateKey: clPriv, PeerKey: clientPeer(gwPub),
		Endpoint: netip.MustParseAddrPort("127.0.0.1:" + strconv.Itoa(port)), KeepAlive: time.Second}.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	_ = ln.Close()
	go func() { _ = cl.ServeClient(ctx, listen, t.Logf) }()
	return listen, cl
}

// roundTrip sends msg through addr and reads the echo, within a bound.
func roundTrip(addr, msg string) (string, error) {
	var c net.Conn
	var err error
	for range 50 {
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, len(msg))
	_, err = io.ReadFull(c, buf)
	return string(buf), err
}

func TestTunnelCarriesTCPToTheTargetOnly(t *testing.T) {
	listen, cl := tunnel(t, echoServer(t, 0), func(gatewayPub wgtunnel.Key) wgtunnel.Key { return gatewayPub })
	msg := "SELECT 1 through WireGuard"
	got, err := roundTrip(listen, msg)
	if err != nil || got != msg {
		t.Fatalf("round trip: %q, %v", got, err)
	}
	c, err := cl.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if c.TxBytes < int64(len(msg)) || c.RxBytes < int64(len(msg)) || c.LastHandshakeUnix == 0 {
		t.Errorf("counters after a round trip: %+v", c)
	}
}

func TestTunnelRefusesAnUnpinnedGateway(t *testing.T) {
	listen, cl := tunnel(t, echoServer(t, 0), func(wgtunnel.Key) wgtunnel.Key { _, other := keyPair(t); return other })
	if got, err := roundTrip(listen, "hello"); err == nil {
		t.Fatalf("a client pinned to another key reached the server: %q", got)
	}
	if c, _ := cl.Counters(); c.LastHandshakeUnix != 0 {
		t.Errorf("a handshake completed with an unpinned gateway: %+v", c)
	}
}

func TestKeys(t *testing.T) {
	data, err := wgtunnel.SecretData()
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2]string{{wgtunnel.GatewayPrivateKey, wgtunnel.GatewayPublicKey}, {wgtunnel.ClientPrivateKey, wgtunnel.ClientPublicKey}}
	for _, pair := range pairs {
		priv, err := wgtunnel.ParseKey(string(data[pair[0]]))
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := priv.Public()
		if pub.String() != string(data[pair[1]]) {
			t.Errorf("%s is not %s's public key", pair[1], pair[0])
		}
	}
	if _, err := wgtunnel.ParseKey("c2hvcnQ="); err == nil {
		t.Error("a short key was accepted")
	}
}

func TestTunnelCarriesManyShortConnections(t *testing.T) {
	listen, _ := tunnel(t, echoServer(t, 0), func(gatewayPub wgtunnel.Key) wgtunnel.Key { return gatewayPub })
	for i := range 2000 {
		if got, err := roundTrip(listen, "hello"); err != nil || got != "hello" {
			t.Fatalf("connection %d: %q, %v", i, got, err)
		}
	}
}

func TestTunnelCarriesManyConnectionsTheServerCloses(t *testing.T) {
	listen, _ := tunnel(t, echoServer(t, 5), func(gatewayPub wgtunnel.Key) wgtunnel.Key { return gatewayPub })
	for i := range 3000 {
		if got, err := roundTrip(listen, "hello"); err != nil || got != "hello" {
			t.Fatalf("connection %d: %q, %v", i, got, err)
		}
	}
}

func TestClientAddrStaysInItsPrefix(t *testing.T) {
	seen := map[netip.Addr]bool{}
	for range 500 {
		a, err := wgtunnel.ClientAddr()
		if err != nil {
			t.Fatal(err)
		}
		if !wgtunnel.ClientPrefix.Contains(a) || a == wgtunnel.GatewayAddr || a == wgtunnel.ClientPrefix.Addr() || a.As4()[3] == 255 {
			t.Fatalf("client address %s", a)
		}
		seen[a] = true
	}
	// Pods after pods must not share one address: 500 draws of 253 cover most of them.
	if len(seen) < 100 {
		t.Errorf("only %d distinct client addresses in 500 draws", len(seen))
	}
}

func TestGatewayDialsTheServerByName(t *testing.T) {
	target := strings.Replace(echoServer(t, 0), "127.0.0.1", "localhost", 1)
	listen, _ := tunnel(t, target, func(gatewayPub wgtunnel.Key) wgtunnel.Key { return gatewayPub })
	for i := range 20 {
		if got, err := roundTrip(listen, "hello"); err != nil || got != "hello" {
			t.Fatalf("connection %d to %s: %q, %v", i, target, got, err)
		}
	}
}

// TestTunnelEndsKeepTimeWaitShort: both ends' network stacks hold a closed connection for
// TimeWait, not gVisor's minute.
func TestTunnelEndsKeepTimeWaitShort(t *testing.T) {
	_, cl := tunnel(t, echoServer(t, 0), func(gatewayPub wgtunnel.Key) wgtunnel.Key { return gatewayPub })
	got, err := timeWait(cl.net)
	if err != nil || got != TimeWait {
		t.Errorf("the client's TIME_WAIT is %s (%v), want %s", got, err, TimeWait)
	}
}
