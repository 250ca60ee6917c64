package openvpn

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Binary is Debian's openvpn.
var Binary = "/usr/sbin/openvpn"

// Counters are what an end of the tunnel reports: the algorithms its TLS handshake negotiated and,
// on a client, its byte counters from OpenVPN's management interface.
type Counters struct {
	// Up is whether the tunnel completed its initialization (OpenVPN's "Initialization Sequence
	// Completed").
	Up bool `json:"up"`
	// DataCipher is the data channel's negotiated cipher (AES-256-GCM, CHACHA20-POLY1305, ...).
	DataCipher string `json:"dataCipher,omitempty"`
	// ControlChannel is the control channel's TLS version and cipher suite.
	ControlChannel string `json:"controlChannel,omitempty"`
	// TunRead and TunWrite are the bytes the client read from and wrote to its TUN device (what
	// pgbench's connections carried); LinkRead and LinkWrite the UDP bytes received from and sent
	// to the gateway (OpenVPN's overhead included).
	TunRead   int64 `json:"tunRead"`
	TunWrite  int64 `json:"tunWrite"`
	LinkRead  int64 `json:"linkRead"`
	LinkWrite int64 `json:"linkWrite"`
}

// Process is a running openvpn.
type Process struct {
	end  End
	cmd  *exec.Cmd
	done chan struct{}
	up   chan struct{}

	mu       sync.Mutex
	counters Counters
}

// Start writes the end's configuration into its RunDir, makes the TUN device node when the
// container has none, and starts openvpn, whose log goes to log. It returns at once; Up says when
// the tunnel is in place.
func Start(ctx context.Context, e End, log io.Writer) (*Process, error) {
	if err := ensureTUN(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(e.RunDir, 0o700); err != nil {
		return nil, err
	}
	conf := filepath.Join(e.RunDir, "openvpn.conf")
	if err := os.WriteFile(conf, []byte(e.Config()), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, Binary, "--config", conf)
	cmd.Cancel = func() error { return cmd.Process.Signal(unix.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", Binary, err)
	}
	p := &Process{end: e, cmd: cmd, done: make(chan struct{}), up: make(chan struct{})}
	go p.readLog(out, log)
	return p, nil
}

// Up is closed once the tunnel is in place.
func (p *Process) Up() <-chan struct{} { return p.up }

// Wait waits for openvpn to exit.
func (p *Process) Wait() error {
	err := p.cmd.Wait()
	<-p.done
	return err
}

// readLog passes openvpn's log on and keeps what it says of the negotiated algorithms.
func (p *Process) readLog(r io.Reader, log io.Writer) {
	defer close(p.done)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(log, line)
		p.mu.Lock()
		wasUp := p.counters.Up
		applyLogLine(&p.counters, line)
		nowUp := p.counters.Up
		p.mu.Unlock()
		if nowUp && !wasUp {
			close(p.up)
		}
	}
}

// applyLogLine reads what one line of openvpn's log (verb 3) says of the tunnel: the negotiated
// algorithms (on a gateway, of the last client's handshake) and whether it is up.
func applyLogLine(c *Counters, line string) {
	switch {
	case strings.Contains(line, "Initialization Sequence Completed"):
		c.Up = true
	case strings.Contains(line, "Data Channel: cipher '"):
		_, rest, _ := strings.Cut(line, "Data Channel: cipher '")
		c.DataCipher, _, _ = strings.Cut(rest, "'")
	case strings.Contains(line, "Control Channel: "):
		_, rest, _ := strings.Cut(line, "Control Channel: ")
		// "TLSv1.3, cipher TLSv1.3 TLS_AES_256_GCM_SHA384, peer certificate: ..."
		parts := strings.Split(rest, ", ")
		if len(parts) >= 2 {
			c.ControlChannel = parts[0] + " " + strings.TrimPrefix(strings.TrimPrefix(parts[1], "cipher "), parts[0]+" ")
		}
	}
}

// Counters is what the end knows now: the negotiated algorithms from its log and, on a client,
// the byte counters asked of the management interface.
func (p *Process) Counters() (Counters, error) {
	p.mu.Lock()
	c := p.counters
	p.mu.Unlock()
	if p.end.Gateway || !c.Up {
		return c, nil
	}
	status, err := managementStatus(p.end.ManagementSocket())
	if err != nil {
		return c, err
	}
	applyStatus(&c, status)
	return c, nil
}

// managementStatus asks the management interface for its statistics ("status"), up to its END.
func managementStatus(socket string) (string, error) {
	conn, err := net.DialTimeout("unix", socket, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("status\n")); err != nil {
		return "", err
	}
	var b strings.Builder
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, ">") { // a notification (the greeting, a log line), not the answer
			continue
		}
		if line == "END" {
			return b.String(), nil
		}
		b.WriteString(line + "\n")
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("the management interface closed before its status ended")
}

// applyStatus reads a client's statistics ("OpenVPN STATISTICS": "TUN/TAP read bytes,N", ...).
func applyStatus(c *Counters, status string) {
	for _, line := range strings.Split(status, "\n") {
		key, value, ok := strings.Cut(line, ",")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "TUN/TAP read bytes":
			c.TunRead = n
		case "TUN/TAP write bytes":
			c.TunWrite = n
		case "TCP/UDP read bytes":
			c.LinkRead = n
		case "TCP/UDP write bytes":
			c.LinkWrite = n
		}
	}
}

// tunDevice is the TUN clone device, character device 10:200, which a container's runtime allows
// but does not create.
const tunDevice = "/dev/net/tun"

// ensureTUN makes the TUN device node when the container has none (root with CAP_MKNOD).
func ensureTUN() error {
	if _, err := os.Stat(tunDevice); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(tunDevice), 0o755); err != nil {
		return err
	}
	if err := unix.Mknod(tunDevice, unix.S_IFCHR|0o666, int(unix.Mkdev(10, 200))); err != nil {
		return fmt.Errorf("cannot make %s (the container needs root with CAP_MKNOD and NET_ADMIN): %w", tunDevice, err)
	}
	return nil
}
