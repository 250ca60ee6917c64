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

// netns is a network namespace the test makes, held by a process of its own (`unshare --net sleep
// infinity`) rather than named with `ip netns add`: the first `ip netns add` on a host binds
// /run/netns over itself, and the namespace files containerd made there for pods before it (the
// demo's) stay mounted beneath that layer, so the kubelet can never remove them and those pods never
// finish terminating. A process-held namespace leaves /run/netns alone and ends with the process.
type netns struct {
	name string
	pid  int
}

// path is the namespace's file, valid while its process lives.
func (n netns) path() string { return fmt.Sprintf("/proc/%d/ns/net", n.pid) }

// inNS runs f on a thread of its own that joined the namespace: sockets it opens and processes it
// starts live there. The thread is never handed back to other goroutines.
func (n netns) inNS(t *testing.T, f func()) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		fd, err := unix.Open(n.path(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
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

// ip runs ip(8) in the host's namespace, or in n's when n is given.
func ip(t *testing.T, n *netns, args ...string) {
	t.Helper()
	cmd := exec.Command("ip", args...)
	if n != nil {
		cmd = exec.Command("nsenter", append([]string{"--net=" + n.path(), "ip"}, args...)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(cmd.Args, " "), err, out)
	}
}

// holdNamespace starts the process that holds a new network namespace, waits until it has entered
// it, and kills it at the end of the test (the namespace goes with it).
func holdNamespace(t *testing.T, name string) netns {
	t.Helper()
	cmd := exec.Command("unshare", "--net", "sleep", "infinity")
	if err := cmd.Start(); err != nil {
		t.Fatalf("unshare --net: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	n := netns{name: name, pid: cmd.Process.Pid}
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if held, err := os.Readlink(n.path()); err == nil && held != own {
			return n
		}
	}
	t.Fatalf("%s: unshare --net did not enter a namespace of its own within 5 s", name)
	return n
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
	gw, cl = holdNamespace(t, "openvpn-gateway-"+id), holdNamespace(t, "openvpn-client-"+id)
	gwDev, clDev := "tbovg"+id, "tbovc"+id
	ip(t, nil, "link", "add", gwDev, "netns", fmt.Sprint(gw.pid), "type", "veth",
		"peer", "name", clDev, "netns", fmt.Sprint(cl.pid))
	ip(t, &gw, "addr", "add", "10.203.0.1/30", "dev", gwDev)
	ip(t, &cl, "addr", "add", "10.203.0.2/30", "dev", clDev)
	for _, end := range []struct {
		ns  *netns
		dev string
	}{{&gw, gwDev}, {&cl, clDev}} {
		ip(t, end.ns, "link", "set", end.dev, "up")
		ip(t, end.ns, "link", "set", "lo", "up")
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
