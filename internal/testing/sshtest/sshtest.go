// Package sshtest runs the real OpenSSH sshd on loopback with the gateway's arguments, for the
// tests of the ssh transport. Like the gateway pod, sshd runs unprivileged: as the "postgres" user
// when the caller is root.
package sshtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshkeys"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshtunnel"
)

// SkipIfShort skips a test that runs sshd and ssh under -short: those tests need OpenSSH installed
// on the machine (hack/deps.sh), and `make test` runs them.
func SkipIfShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs OpenSSH's sshd and ssh on this machine: skipped under -short, `make test` runs it")
	}
}

// Gateway is a running sshd.
type Gateway struct {
	Port int
	// User is the account sshd runs as and admits.
	User string
	// IdentityFile and KnownHostsFile are the client's key and the pinned host key.
	IdentityFile   string
	KnownHostsFile string
	Material       *sshkeys.Material
	Log            *bytes.Buffer

	dir string
	cmd *exec.Cmd
}

// Start runs sshd on a free loopback port, forwarding only to permitOpen ("host:port").
func Start(permitOpen string) (*Gateway, error) {
	sshd := "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		return nil, fmt.Errorf("sshd not found (hack/deps.sh installs openssh-server): %w", err)
	}
	g := &Gateway{Log: &bytes.Buffer{}}
	var cred *syscall.Credential
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	g.User = u.Username
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs an unprivileged user for sshd: %w", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		cred, g.User = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, pg.Username
	}
	if g.dir, err = os.MkdirTemp("", "tunnelbench-ssh-"); err != nil {
		return nil, err
	}
	if g.Port, err = loopback.FreePort(); err != nil {
		return nil, err
	}
	if g.Material, err = sshkeys.Generate([]string{"127.0.0.1:" + strconv.Itoa(g.Port)}); err != nil {
		return nil, err
	}
	for name, data := range g.Material.SecretData() {
		path := filepath.Join(g.dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
		if cred != nil && (name == sshkeys.HostKey || name == sshkeys.AuthorizedKeys) {
			if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, err
			}
		}
	}
	if err := os.Chmod(g.dir, 0o755); err != nil {
		return nil, err
	}
	g.IdentityFile, g.KnownHostsFile = filepath.Join(g.dir, sshkeys.ClientKey), filepath.Join(g.dir, sshkeys.KnownHosts)
	args := sshtunnel.Gateway{
		HostKeyFile: filepath.Join(g.dir, sshkeys.HostKey), AuthorizedKeysFile: filepath.Join(g.dir, sshkeys.AuthorizedKeys),
		PermitOpen: permitOpen, ListenAddress: "127.0.0.1", Port: g.Port, User: g.User,
	}.SSHDArgs()
	g.cmd = exec.Command(sshd, args...)
	g.cmd.Stdout, g.cmd.Stderr = g.Log, g.Log
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(g.Port))
		if err == nil {
			_ = c.Close()
			return g, nil
		}
		if time.Now().After(deadline) {
			g.Stop()
			return nil, fmt.Errorf("sshd did not listen: %w\n%s", err, g.Log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Tunnel is a tunnel through this gateway to target, listening on localPort.
func (g *Gateway) Tunnel(target string, localPort int) sshtunnel.Tunnel {
	return sshtunnel.Tunnel{Gateway: "127.0.0.1", Port: g.Port, LocalPort: localPort, Target: target,
		IdentityFile: g.IdentityFile, KnownHostsFile: g.KnownHostsFile, User: g.User, KeepAlive: 5 * time.Second}
}

// PID is the listening sshd's process id; each session is a child of it.
func (g *Gateway) PID() int { return g.cmd.Process.Pid }

// Stop ends sshd and removes its files.
func (g *Gateway) Stop() {
	if g.cmd != nil && g.cmd.Process != nil {
		_ = g.cmd.Process.Kill()
		_ = g.cmd.Wait()
	}
	_ = os.RemoveAll(g.dir)
}
