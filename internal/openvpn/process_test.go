package openvpn

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// netns is a network namespace the test creates (ip netns), joined by a veth pair to another.
type netns struct{ name string }

// inNS runs f on a thread of its own that joined the namespace: sockets it opens and processes it
// starts live there. The thread is never handed back to other goroutines.
func (n netns) inNS(t *testing.T, f func()) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		fd, err := unix.Open("/run/netns/"+n.name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer func() { _ = unix.Close(fd) }()
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		f()
		errc <- nil
	}()
	if err := <-errc; err != nil {
		t.Fatalf("cannot enter %s: %v", n.name, err)
	}
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// twoNamespaces makes a gateway's and a client's namespace joined by a veth pair (gateway
// 10.203.0.1/30, client .2), removed at the end of the test.
func twoNamespaces(t *testing.T) (gw, cl netns, gwAddr string) {
	if os.Geteuid() != 0 {
		t.Skip("OpenVPN's ends need TUN devices and network namespaces: run as root")
	}
	if _, err := os.Stat(Binary); err != nil {
		t.Fatalf("%s: %v (hack/deps.sh installs openvpn)", Binary, err)
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := fmt.Sprintf("%x", b)
	gw, cl = netns{"tbovpn-gw-" + id}, netns{"tbovpn-cl-" + id}
	for _, n := range []netns{gw, cl} {
		ip(t, "netns", "add", n.name)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n.name).Run() })
	}
	ip(t, "link", "add", "tbovg"+id, "netns", gw.name, "type", "veth", "peer", "name", "tbovc"+id, "netns", cl.name)
	ip(t, "-n", gw.name, "addr", "add", "10.203.0.1/30", "dev", "tbovg"+id)
	ip(t, "-n", cl.name, "addr", "add", "10.203.0.2/30", "dev", "tbovc"+id)
	for _, n := range []struct{ ns, dev string }{{gw.name, "tbovg" + id}, {cl.name, "tbovc" + id}} {
		ip(t, "-n", n.ns, "link", "set", n.dev, "up")
		ip(t, "-n", n.ns, "link", "set", "lo", "up")
	}
	return gw, cl, "10.203.0.1"
}

// startEnd starts an end in ns and stops it at the end of the test.
func startEnd(t *testing.T, ns netns, e End, log io.Writer) *Process {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var p *Process
	var err error
	ns.inNS(t, func() { p, err = Start(ctx, e, log) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = p.Wait() })
	return p
}

func keyDir(t *testing.T, data map[string][]byte) string {
	dir := t.TempDir()
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func waitUp(p *Process, d time.Duration) bool {
	select {
	case <-p.Up():
		return true
	case <-time.After(d):
		return false
	}
}

// TestTunnelCarriesTCPAndReportsWhatItNegotiated runs the real openvpn at both ends, in two
// network namespaces: a TCP exchange through the tunnel, the negotiated algorithms and the
// client's counters; and a client that pins another gateway name never comes up.
func TestTunnelCarriesTCPAndReportsWhatItNegotiated(t *testing.T) {
	gw, cl, gwAddr := twoNamespaces(t)
	data, err := SecretData("tb-gateway")
	if err != nil {
		t.Fatal(err)
	}
	keys := keyDir(t, data)
	gwLog, clLog := &syncWriter{w: &strings.Builder{}}, &syncWriter{w: &strings.Builder{}}
	gateway := startEnd(t, gw, End{Gateway: true, KeyDir: keys, GatewayName: "tb-gateway", RunDir: t.TempDir()}, gwLog)
	if !waitUp(gateway, 20*time.Second) {
		t.Fatalf("the gateway did not come up:\n%s", gwLog.String())
	}
	var ln net.Listener
	gw.inNS(t, func() { ln, err = net.Listen("tcp", fmt.Sprintf("%s:%d", GatewayAddr, ForwardPort)) })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer func() { _ = c.Close() }()
		b, _ := io.ReadAll(c)
		_, _ = c.Write([]byte(strings.ToUpper(string(b))))
	}()

	remote := fmt.Sprintf("%s:%d", gwAddr, ListenPort)
	client := startEnd(t, cl, End{KeyDir: keys, Remote: remote, GatewayName: "tb-gateway", RunDir: t.TempDir()}, clLog)
	if !waitUp(client, 30*time.Second) {
		t.Fatalf("the client did not come up:\n%s\ngateway:\n%s", clLog.String(), gwLog.String())
	}
	var c net.Conn
	cl.inNS(t, func() { c, err = net.DialTimeout("tcp", fmt.Sprintf("%s:%d", GatewayAddr, ForwardPort), 5*time.Second) })
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.Repeat("pgbench ", 4096)
	_, _ = c.Write([]byte(payload))
	_ = c.(*net.TCPConn).CloseWrite()
	back, _ := io.ReadAll(c)
	_ = c.Close()
	if string(back) != strings.ToUpper(payload) {
		t.Errorf("read %d bytes back through the tunnel, want %d", len(back), len(payload))
	}

	got, err := client.Counters()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("client counters: %+v", got)
	if got.DataCipher != "AES-256-GCM" || !strings.HasPrefix(got.ControlChannel, "TLSv1.3 TLS_") {
		t.Errorf("negotiated %q / %q, want AES-256-GCM and TLSv1.3", got.DataCipher, got.ControlChannel)
	}
	if got.TunRead < int64(len(payload)) || got.TunWrite < int64(len(payload)) || got.LinkWrite <= got.TunRead {
		t.Errorf("counters %+v: want the payload both ways on the TUN device, and more on the link (OpenVPN's overhead)", got)
	}

	// A client pinning another gateway's name refuses this one.
	wrongLog := &syncWriter{w: &strings.Builder{}}
	wrong := startEnd(t, cl, End{KeyDir: keys, Remote: remote, GatewayName: "another-gateway", RunDir: t.TempDir()},
		wrongLog)
	if waitUp(wrong, 8*time.Second) {
		t.Errorf("a client pinning another gateway name came up:\n%s", wrongLog.String())
	}
	if !strings.Contains(wrongLog.String(), "VERIFY X509NAME ERROR") {
		t.Errorf("the refusal is not in the client's log:\n%s", wrongLog.String())
	}
}

// syncWriter lets the test read a log that an end's goroutine writes.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
