package sshtunnel_test

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/internal/testing/sshtest"
	"github.com/tunnelbench/tunnelbench/internal/transport/link"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshkeys"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshtunnel"
)

// These tests run the real OpenSSH sshd (as a non-root user, like the gateway pod) and ssh with
// the arguments the operator generates, on loopback.

type rig struct {
	*sshtest.Gateway
	allowed int // the permitted target
	other   int // a target the gateway must refuse
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// greeter accepts connections on a loopback port and writes a greeting to each.
func greeter(t *testing.T, greeting string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte(greeting + "\n"))
			_ = c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

func startGateway(t *testing.T) *rig {
	t.Helper()
	r := &rig{allowed: greeter(t, "hello from the database"), other: greeter(t, "a secret service")}
	g, err := sshtest.Start("127.0.0.1:" + strconv.Itoa(r.allowed))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	r.Gateway = g
	return r
}

func (r *rig) tunnel(target int, knownHosts string) sshtunnel.Tunnel {
	tn := r.Tunnel("127.0.0.1:"+strconv.Itoa(target), 0)
	tn.KnownHostsFile = knownHosts
	return tn
}

// startTunnel runs ssh and returns the local port once it accepts connections, or ssh's log.
func startTunnel(t *testing.T, tn sshtunnel.Tunnel) (port int, logFile string, exited chan error) {
	t.Helper()
	tn.LocalPort = freePort(t)
	tn.LogFile = filepath.Join(t.TempDir(), "ssh.log")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "ssh", tn.SSHArgs()...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(cancel)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err
			return 0, tn.LogFile, exited
		default:
		}
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(tn.LocalPort)); err == nil {
			_ = c.Close()
			return tn.LocalPort, tn.LogFile, exited
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the tunnel did not come up")
	return 0, "", nil
}

func readLine(t *testing.T, port int) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	if err != nil {
		return ""
	}
	defer func() { _ = c.Close() }()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return string(b)
}

func TestTunnelForwardsAndReportsWhatWasNegotiated(t *testing.T) {
	sshtest.SkipIfShort(t)
	r := startGateway(t)
	tests := []struct {
		name, cipher, mac string
		compression       bool
		want              sshtunnel.Negotiated
	}{
		{"ssh default", "", "", false, sshtunnel.Negotiated{Cipher: "chacha20-poly1305@openssh.com", MAC: "<implicit>", Compression: "none"}},
		{"aes256-ctr with a MAC, compressed", "aes256-ctr", "hmac-sha2-512-etm@openssh.com", true,
			sshtunnel.Negotiated{Cipher: "aes256-ctr", MAC: "hmac-sha2-512-etm@openssh.com", Compression: "zlib@openssh.com"}},
		{"aes128-gcm", "aes128-gcm@openssh.com", "", false,
			sshtunnel.Negotiated{Cipher: "aes128-gcm@openssh.com", MAC: "<implicit>", Compression: "none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tn := r.tunnel(r.allowed, r.KnownHostsFile)
			tn.Cipher, tn.MAC, tn.Compression = tt.cipher, tt.mac, tt.compression
			port, logFile, _ := startTunnel(t, tn)
			if port == 0 {
				t.Fatalf("ssh exited:\n%s", readLog(t, logFile))
			}
			if got := readLine(t, port); got != "hello from the database" {
				t.Fatalf("through the tunnel: %q\n%s", got, readLog(t, logFile))
			}
			neg, lastErr := sshtunnel.ParseLog(readLog(t, logFile))
			if neg == nil {
				t.Fatalf("nothing negotiated in:\n%s", readLog(t, logFile))
			}
			// Both sides announce the versions of the real binaries.
			if !strings.HasPrefix(neg.ClientVersion, "OpenSSH_") || !strings.HasPrefix(neg.ServerVersion, "OpenSSH_") {
				t.Errorf("versions: client %q, server %q", neg.ClientVersion, neg.ServerVersion)
			}
			neg.ClientVersion, neg.ServerVersion = "", ""
			if *neg != tt.want {
				t.Errorf("negotiated %+v, want %+v", neg, tt.want)
			}
			if lastErr != "" {
				t.Errorf("a healthy tunnel logged a failure: %s", lastErr)
			}
		})
	}
}

func TestGatewayRefusesOtherDestinations(t *testing.T) {
	sshtest.SkipIfShort(t)
	r := startGateway(t)
	port, logFile, _ := startTunnel(t, r.tunnel(r.other, r.KnownHostsFile))
	if port == 0 {
		t.Fatalf("ssh exited:\n%s", readLog(t, logFile))
	}
	if got := readLine(t, port); got != "" {
		t.Fatalf("the gateway forwarded to a destination outside PermitOpen: %q", got)
	}
	time.Sleep(200 * time.Millisecond)
	if _, lastErr := sshtunnel.ParseLog(readLog(t, logFile)); !strings.Contains(lastErr, "administratively prohibited") {
		t.Errorf("ssh's log does not show the refusal: %q", lastErr)
	}
}

func TestClientPinsTheHostKey(t *testing.T) {
	sshtest.SkipIfShort(t)
	r := startGateway(t)
	impostor, err := sshkeys.Generate([]string{"127.0.0.1:" + strconv.Itoa(r.Port)})
	if err != nil {
		t.Fatal(err)
	}
	wrong := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(wrong, impostor.KnownHosts, 0o600); err != nil {
		t.Fatal(err)
	}
	port, logFile, exited := startTunnel(t, r.tunnel(r.allowed, wrong))
	if port != 0 {
		t.Fatal("ssh connected to a gateway whose host key is not the pinned one")
	}
	if err := <-exited; err == nil {
		t.Error("ssh exited 0 on a host key mismatch")
	}
	if _, lastErr := sshtunnel.ParseLog(readLog(t, logFile)); !strings.Contains(lastErr, "Host key verification failed") &&
		!strings.Contains(lastErr, "REMOTE HOST IDENTIFICATION HAS CHANGED") {
		t.Errorf("last error %q", lastErr)
	}
}

func TestGatewayGivesNoShellAndAdmitsOnlyTheClientKey(t *testing.T) {
	sshtest.SkipIfShort(t)
	r := startGateway(t)
	tn := r.tunnel(r.allowed, r.KnownHostsFile)
	// Asked to run id, the gateway runs its ForceCommand instead, which waits for the connection
	// to end: ssh is stopped after 3 s, having printed nothing of id's.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ssh", append(tn.SSHArgs(), "id")...).CombinedOutput()
	if err == nil || strings.Contains(string(out), "uid=") {
		t.Errorf("a command ran on the gateway: err %v, output %q", err, out)
	}

	stranger, _ := sshkeys.Generate([]string{"x:1"})
	key := filepath.Join(t.TempDir(), "id")
	if err := os.WriteFile(key, stranger.ClientKeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	tn.IdentityFile = key
	port, logFile, _ := startTunnel(t, tn)
	if port != 0 {
		t.Fatal("the gateway admitted a key that is not in authorized_keys")
	}
	if _, lastErr := sshtunnel.ParseLog(readLog(t, logFile)); !strings.Contains(lastErr, "Permission denied") {
		t.Errorf("last error %q", lastErr)
	}
}

// TestSessionEndsWithTheConnection: the tunnel's session runs the gateway's ForceCommand (the
// session is what makes sshd disable Nagle on the connection), and the command does not outlive
// the connection: once ssh is gone, so is it.
func TestSessionEndsWithTheConnection(t *testing.T) {
	sshtest.SkipIfShort(t)
	r := startGateway(t)
	tn := r.tunnel(r.allowed, r.KnownHostsFile)
	tn.LocalPort = freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "ssh", tn.SSHArgs()...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waiting := func() int {
		// Anchored: sshd's own command line holds the ForceCommand's text too. And this gateway's
		// only: the other packages' tests run sshd gateways at the same time.
		out, _ := exec.Command("pgrep", "-f", "^/usr/bin/tail -f --pid=").Output()
		n := 0
		for _, pid := range strings.Fields(string(out)) {
			if descendsFrom(pid, r.PID()) {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for waiting() == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if waiting() == 0 {
		t.Fatalf("the gateway runs no ForceCommand for the tunnel's session\n%s", r.Log)
	}
	cancel()
	_ = cmd.Wait()
	deadline = time.Now().Add(5 * time.Second)
	for waiting() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := waiting(); n > 0 {
		t.Errorf("%d ForceCommand processes outlived their connection", n)
	}
}

// TestTunnelThroughTheLinkProxy: ssh dials the link proxy's loopback end and still checks the
// gateway's pinned key under the gateway's own name (HostKeyAlias): it connects with the right
// key, and refuses an impostor's under that name.
func TestTunnelThroughTheLinkProxy(t *testing.T) {
	sshtest.SkipIfShort(t)
	r := startGateway(t)
	p, err := link.Start("127.0.0.1:0", "127.0.0.1:"+strconv.Itoa(r.Port), link.Link{RTT: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	_, proxyPort, _ := net.SplitHostPort(p.Addr())
	const alias = "[gateway.test]:2222"
	knownHosts := func(m *sshkeys.Material) string {
		_, key, _ := strings.Cut(string(m.KnownHosts), " ")
		path := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(path, []byte(alias+" "+key), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tunnel := func(known string) sshtunnel.Tunnel {
		tn := r.tunnel(r.allowed, known)
		tn.Port, _ = strconv.Atoi(proxyPort)
		tn.HostKeyAlias = alias
		return tn
	}

	port, logFile, _ := startTunnel(t, tunnel(knownHosts(r.Material)))
	if port == 0 {
		t.Fatalf("ssh through the proxy exited:\n%s", readLog(t, logFile))
	}
	if got := readLine(t, port); got != "hello from the database" {
		t.Fatalf("through the proxy and the tunnel: %q\n%s", got, readLog(t, logFile))
	}

	impostor, err := sshkeys.Generate([]string{"x:1"})
	if err != nil {
		t.Fatal(err)
	}
	port, logFile, exited := startTunnel(t, tunnel(knownHosts(impostor)))
	if port != 0 {
		t.Fatal("ssh accepted a key other than the one pinned under the gateway's name")
	}
	if err := <-exited; err == nil {
		t.Errorf("ssh exited 0 on a host key mismatch:\n%s", readLog(t, logFile))
	}
}

// TestTunnelToAnIPv6Server: the real ssh and sshd forward to a server on an IPv6 literal written
// as the operator writes it, bracketed, in -L and PermitOpen (the IPv6 loopback).
func TestTunnelToAnIPv6Server(t *testing.T) {
	sshtest.SkipIfShort(t)
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello over IPv6\n"))
			_ = c.Close()
		}
	}()
	target := net.JoinHostPort("::1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	g, err := sshtest.Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	tn := g.Tunnel(target, 0)
	tn.KnownHostsFile = g.KnownHostsFile
	port, logFile, _ := startTunnel(t, tn)
	if port == 0 {
		t.Fatalf("ssh exited:\n%s", readLog(t, logFile))
	}
	if got := readLine(t, port); got != "hello over IPv6" {
		t.Fatalf("through the tunnel to %s: %q\n%s", target, got, readLog(t, logFile))
	}
}

// descendsFrom reports whether process pid is a descendant of ancestor, read from /proc.
func descendsFrom(pid string, ancestor int) bool {
	for range 16 {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return false
		}
		// The parent is the second field after the command, which is in parentheses.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 {
			return false
		}
		if pid = fields[1]; pid == strconv.Itoa(ancestor) {
			return true
		}
		if pid == "0" || pid == "1" {
			return false
		}
	}
	return false
}
