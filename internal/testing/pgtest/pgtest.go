// Package pgtest starts a real, throwaway PostgreSQL server on 127.0.0.1 with TLS, for the
// integration tests and the benchmarks. It runs initdb and postgres from the installed PostgreSQL
// (hack/deps.sh installs it), as the "postgres" user when the caller is root, since PostgreSQL
// refuses to run as root.
package pgtest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
)

// SkipIfShort skips a test that runs PostgreSQL (and PgBouncer or pgbench) under -short: those
// tests need the servers installed on the machine (hack/deps.sh), and `make test` runs them.
func SkipIfShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL, pgbench and PgBouncer on this machine: skipped under -short, `make test` runs it")
	}
}

// Options shape the server.
type Options struct {
	// RequireTLS makes pg_hba.conf accept TCP connections only over TLS.
	RequireTLS bool
	// Settings are extra postgres -c settings.
	Settings map[string]string
	// HostAuth is pg_hba.conf's method for TCP connections; default scram-sha-256. "password"
	// asks for the password in clear text.
	HostAuth string
}

// Server is a running PostgreSQL.
type Server struct {
	Host     string
	Port     int
	User     string
	Password string
	Database string
	// CAFile is the CA that signed the server certificate (valid for localhost and 127.0.0.1).
	CAFile string
	// OtherCAFile is a CA that signed nothing the server presents, to test verification failures.
	OtherCAFile string
	BinDir      string

	dir       string
	cmd       *exec.Cmd
	removeDir bool
	// args, cred and logPath start postgres again (Up).
	args    []string
	cred    *syscall.Credential
	logPath string
}

// BinDir finds PostgreSQL's server binaries: $PG_BINDIR, else the newest /usr/lib/postgresql/N/bin.
func BinDir() (string, error) {
	if d := os.Getenv("PG_BINDIR"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server found under /usr/lib/postgresql: run hack/deps.sh or set PG_BINDIR")
}

func versionOf(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

// StartTemp starts a server in a new temporary folder that Stop removes. The folder sits directly
// under the system's temporary folder, so that the server's user can reach it.
func StartTemp(opts Options) (*Server, error) {
	dir, err := os.MkdirTemp("", "tunnelbench-pg-")
	if err != nil {
		return nil, err
	}
	s, err := Start(dir, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.removeDir = true
	return s, nil
}

// Start initializes a cluster in dir and starts it on a free loopback port.
func Start(dir string, opts Options) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", User: "postgres", Password: "pgtest-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		Database: "postgres", BinDir: bin, dir: dir}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeCertificates(s, dir); err != nil {
		return nil, err
	}
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(s.Password+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := chownTree(dir, cred); err != nil {
		return nil, err
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", s.User, "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb failed: %w: %s", err, out)
	}
	method := cmp.Or(opts.HostAuth, "scram-sha-256")
	hba := "local all all trust\nhostssl all all 127.0.0.1/32 " + method + "\n"
	if !opts.RequireTLS {
		hba += "hostnossl all all 127.0.0.1/32 " + method + "\n"
	}
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		return nil, err
	}
	if s.Port, err = loopback.FreePort(); err != nil {
		return nil, err
	}
	settings := map[string]string{
		"port": strconv.Itoa(s.Port), "listen_addresses": s.Host, "unix_socket_directories": dir,
		"ssl": "on", "ssl_cert_file": filepath.Join(dir, "server.crt"), "ssl_key_file": filepath.Join(dir, "server.key"),
		"max_connections": "200", "fsync": "off", "logging_collector": "off",
	}
	for k, v := range opts.Settings {
		settings[k] = v
	}
	args := []string{"-D", data}
	for k, v := range settings {
		args = append(args, "-c", k+"="+v)
	}
	s.args, s.cred, s.logPath = args, cred, filepath.Join(dir, "postgres.log")
	if err := s.Up(); err != nil {
		return nil, err
	}
	return s, nil
}

// ConnString is a libpq/pgx connection string with the given sslmode.
func (s *Server) ConnString(sslmode string) string {
	return fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=%s sslrootcert=%s",
		s.Host, s.Port, s.User, s.Password, s.Database, sslmode, s.CAFile)
}

// Env returns libpq environment variables for a connection with the given sslmode.
func (s *Server) Env(sslmode string) map[string]string {
	env := map[string]string{
		"PGHOST": s.Host, "PGPORT": strconv.Itoa(s.Port), "PGUSER": s.User, "PGPASSWORD": s.Password,
		"PGDATABASE": s.Database, "PGSSLMODE": sslmode, "PGSSLROOTCERT": "",
	}
	if strings.HasPrefix(sslmode, "verify") {
		env["PGSSLROOTCERT"] = s.CAFile
	}
	return env
}

// Up starts the server's postgres on its data: at Start, and again after Down.
func (s *Server) Up() error {
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	s.cmd = exec.Command(filepath.Join(s.BinDir, "postgres"), s.args...)
	// Pdeathsig: a test process killed before its cleanup (a fuzz worker the coordinator stops)
	// takes its server with it (immediate shutdown), instead of leaving it running.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("cannot start postgres: %w", err)
	}
	if err := s.waitReady(30 * time.Second); err != nil {
		s.Stop()
		log, _ := os.ReadFile(s.logPath)
		return fmt.Errorf("%w; postgres.log:\n%s", err, log)
	}
	return nil
}

// Down shuts the server down and keeps its data, for Up to start it again: a database that goes
// away and comes back.
func (s *Server) Down() {
	keep := s.removeDir
	s.removeDir = false
	s.Stop()
	s.removeDir = keep
}

// Stop shuts the server down (fast mode) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	s.cmd = nil
	if s.removeDir {
		_ = os.RemoveAll(s.dir)
	}
}

func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.ConnString("require"))
		if err == nil {
			_ = conn.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("postgres did not accept connections within %s: %w", timeout, lastErr)
}

// credential is who runs initdb and postgres: the caller, or "postgres" when the caller is root.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a postgres user to run the server: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func chownTree(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	// The parent must be traversable by the server's user.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid))
	})
}
