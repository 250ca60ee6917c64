package proxy

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
)

// installedHAProxy is the real HAProxy (hack/deps.sh installs it).
func installedHAProxy(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/haproxy"); err == nil {
		return "/usr/sbin/haproxy"
	}
	t.Fatal("haproxy is not installed: run hack/deps.sh")
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// echo stands in for the server.
func echo(t *testing.T) string {
	t.Helper()
	addr, stop, err := loopback.Echo(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

func stats(t *testing.T, port int) Stats {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + StatsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	s, err := ParseCSV(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestProxyCarriesConnectionsAndCountsThem(t *testing.T) {
	cfg := Config{Target: echo(t), Port: freePort(t), StatsPort: freePort(t)}
	text, err := cfg.Render()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(installedHAProxy(t), "-c", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("haproxy refuses the configuration: %v\n%s", err, out)
	}
	cmd := exec.Command(installedHAProxy(t), "-db", "-f", path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(cfg.Port)
	var before Stats
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
			break
		}
		if i == 100 {
			t.Fatalf("haproxy does not listen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The probe above is a session too, counted when HAProxy gets to it:
	// the baseline waits for it so that it does not land among the three.
	for range 50 {
		if before = stats(t, cfg.StatsPort); before.Frontend.Sessions >= 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	const conns, msg = 3, "select 1"
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(msg))
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
			t.Fatalf("through the proxy: %q, %v", buf, err)
		}
		_ = c.Close()
	}
	// HAProxy counts a session's bytes when it ends.
	var got Counters
	for range 50 {
		got = stats(t, cfg.StatsPort).Frontend.Sub(before.Frontend)
		if got.Sessions == conns && got.BytesOut == conns*int64(len(msg)) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got.Sessions != conns || got.BytesIn != conns*int64(len(msg)) || got.BytesOut != conns*int64(len(msg)) {
		t.Errorf("the proxy counted %+v, want %d sessions of %d bytes each way", got, conns, len(msg))
	}
}

func TestRenderRefusesAnInjectedTarget(t *testing.T) {
	for _, target := range []string{"", "pg:5432\n  server evil 10.0.0.1:22", "pg:5432 # x"} {
		if _, err := (Config{Target: target}).Render(); err == nil {
			t.Errorf("target %q accepted", target)
		}
	}
}
