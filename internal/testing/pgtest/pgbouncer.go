package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/internal/transport/pki"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/pgbouncer"
)

// PgBouncer is a running PgBouncer configured by package pgbouncer.
type PgBouncer struct {
	Port int
	// Dir holds its configuration; the tests may put certificates there before Start.
	Dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// StartPgBouncer writes cfg (ListenPort 0 picks a free loopback port) and the password into a
// temporary folder and starts the pgbouncer on PATH, as "postgres" when the caller is root
// (PgBouncer refuses to run as root). It returns once the listener accepts connections.
func StartPgBouncer(cfg pgbouncer.Config, password string) (*PgBouncer, error) {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/pgbouncer"); serr != nil {
			return nil, fmt.Errorf("pgbouncer is not installed (hack/deps.sh installs it): %w", err)
		}
		bin = "/usr/sbin/pgbouncer"
	}
	if cfg.ListenPort == 0 {
		if cfg.ListenPort, err = loopback.FreePort(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		return nil, err
	}
	ini, err := pgbouncer.Write(filepath.Join(dir, "etc"), cfg, password)
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	if err := chownTree(dir, cred); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "pgbouncer.log"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = logFile.Close() }()
	p := &PgBouncer{Port: cfg.ListenPort, Dir: dir}
	p.cmd = exec.Command(bin, ini)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start pgbouncer: %w", err)
	}
	p.exited = make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(cfg.ListenAddr, strconv.Itoa(cfg.ListenPort)), time.Second)
		if err == nil {
			_ = c.Close()
			return p, nil
		}
		select {
		case <-p.exited:
			log := p.Log()
			p.Stop()
			return nil, fmt.Errorf("pgbouncer exited at start; its log:\n%s", log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log := p.Log()
			p.Stop()
			return nil, fmt.Errorf("pgbouncer did not listen within 10s: %w; its log:\n%s", err, log)
		}
	}
}

// Log is what PgBouncer has written so far.
func (p *PgBouncer) Log() string {
	b, _ := os.ReadFile(filepath.Join(p.Dir, "pgbouncer.log"))
	return string(b)
}

// Stop terminates PgBouncer and removes its folder.
func (p *PgBouncer) Stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		p.cmd = nil
	}
	_ = os.RemoveAll(p.Dir)
}

// ReadableDir creates a temporary folder PgBouncer's user can read: it runs as "postgres" when the
// caller is root, and the callers' own temporary folders are private.
func ReadableDir() (string, error) {
	dir, err := os.MkdirTemp("", "pgbouncer-files-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

// WritePoolerCertificate writes into dir (tls.crt, tls.key) a certificate for hosts signed by a
// fresh CA, as the operator makes for a pooler's listener.
func WritePoolerCertificate(dir string, hosts ...string) (certFile, keyFile string, err error) {
	ca, err := pki.NewCA("pooler CA", time.Hour)
	if err != nil {
		return "", "", err
	}
	kp, err := ca.Issue("pooler", hosts, time.Hour)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, kp.CertPEM, 0o644); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, kp.KeyPEM, 0o644)
}
