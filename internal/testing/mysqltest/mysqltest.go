// Package mysqltest starts a real MariaDB server for the tests of the MySQL engine: mariadbd from
// Debian's mariadb-server (hack/deps.sh installs it), on a free loopback port, with TLS on and a
// database and user of its own, in a temporary folder that Stop removes.
package mysqltest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/internal/transport/pki"
)

// SkipIfShort skips a test that runs MariaDB (and sysbench) under -short: they need the server
// installed on the machine (hack/deps.sh), and `make test` runs them.
func SkipIfShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs MariaDB and sysbench on this machine: skipped under -short, `make test` runs it")
	}
}

// Server is a running MariaDB.
type Server struct {
	Host     string
	Port     int
	User     string
	Password string
	Database string
	// CAFile is the CA that signed the server certificate (valid for localhost and 127.0.0.1),
	// and the client certificate in ClientCertFile, with its key in ClientKeyFile.
	CAFile, ClientCertFile, ClientKeyFile string
	// Version is the server's version().
	Version string

	dir  string
	cmd  *exec.Cmd
	args []string
	// admin is the account the test logs in as by the socket's peer credentials: the OS user
	// that runs the test, which mariadb-install-db gives the unix_socket plugin.
	admin string
}

// Start initializes a data folder in a new temporary folder and starts mariadbd on it.
func Start() (*Server, error) {
	dir, err := os.MkdirTemp("", "tunnelbench-mariadb-")
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", User: "tunnelbench", Password: "mysqltest-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		Database: "tunnelbench", dir: dir}
	if err := s.start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start() error {
	if err := os.Chmod(s.dir, 0o755); err != nil {
		return err
	}
	if err := s.writeCertificates(); err != nil {
		return err
	}
	owner, err := serverUser()
	if err != nil {
		return err
	}
	s.admin = owner
	if os.Geteuid() == 0 {
		s.admin = "root"
	}
	data := filepath.Join(s.dir, "data")
	install := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--user="+owner,
		"--auth-root-authentication-method=socket", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("mariadb-install-db failed (hack/deps.sh installs mariadb-server): %w: %s", err, out)
	}
	if s.Port, err = loopback.FreePort(); err != nil {
		return err
	}
	s.args = []string{"--no-defaults", "--datadir=" + data, "--user=" + owner, "--port=" + strconv.Itoa(s.Port),
		"--bind-address=" + s.Host, "--socket=" + s.socket(), "--pid-file=" + filepath.Join(s.dir, "mariadbd.pid"),
		"--skip-name-resolve", "--max-connections=500", "--innodb-flush-log-at-trx-commit=0", "--skip-log-bin",
		"--ssl-ca=" + s.CAFile, "--ssl-cert=" + filepath.Join(s.dir, "server.crt"),
		"--ssl-key=" + filepath.Join(s.dir, "server.key"), "--log-error=" + filepath.Join(s.dir, "error.log")}
	if err := chownTree(s.dir, owner); err != nil {
		return err
	}
	if err := s.Up(); err != nil {
		return err
	}
	// The administrator logs in by the socket's peer credentials; the test's own user gets a
	// password and the rights over its database only, as an application's user would.
	setup := fmt.Sprintf("CREATE DATABASE %[1]s; CREATE USER '%[2]s'@'%%' IDENTIFIED BY '%[3]s'; "+
		"GRANT ALL ON %[1]s.* TO '%[2]s'@'%%';", s.Database, s.User, s.Password)
	if out, err := exec.Command("mariadb", "--no-defaults", "--socket="+s.socket(), "-u"+s.admin, "-e", setup).CombinedOutput(); err != nil {
		return fmt.Errorf("cannot create the test's database and user: %w: %s", err, out)
	}
	db, err := s.Open("")
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	return db.QueryRow("SELECT version()").Scan(&s.Version)
}

func (s *Server) socket() string { return filepath.Join(s.dir, "mariadbd.sock") }

// Up starts mariadbd on the server's data and waits until it accepts connections: at Start, and
// again after Down.
func (s *Server) Up() error {
	s.cmd = exec.Command("mariadbd", s.args...)
	// Pdeathsig: a test process killed before its cleanup takes its server with it.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("cannot start mariadbd (hack/deps.sh installs mariadb-server): %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := exec.Command("mariadb-admin", "--no-defaults", "--socket="+s.socket(), "-u"+s.admin, "ping").Run()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			return fmt.Errorf("mariadbd did not answer within 30 s: %w; error.log:\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Kill stops the server at once (SIGKILL), as a crash would, and keeps its data for Up.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Stop shuts the server down and removes its folder.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			s.Kill()
		}
		s.cmd = nil
	}
	_ = os.RemoveAll(s.dir)
}

// Env returns the connection as the transports write it (libpq's variables), with sslmode.
func (s *Server) Env(sslmode string) map[string]string {
	env := map[string]string{
		"PGHOST": s.Host, "PGPORT": strconv.Itoa(s.Port), "PGUSER": s.User, "PGPASSWORD": s.Password,
		"PGDATABASE": s.Database, "PGSSLMODE": sslmode, "PGSSLROOTCERT": "",
	}
	if strings.HasPrefix(sslmode, "verify") {
		env["PGSSLROOTCERT"], env["PGSSLCERT"], env["PGSSLKEY"] = s.CAFile, s.ClientCertFile, s.ClientKeyFile
	}
	return env
}

// Open connects as the test's user with the Go MySQL driver; tlsConfig names a registered TLS
// configuration ("" for none).
func (s *Server) Open(tlsConfig string) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = s.User, s.Password, "tcp", fmt.Sprintf("%s:%d", s.Host, s.Port), s.Database
	cfg.TLSConfig = tlsConfig
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("cannot connect to the test's MariaDB: %w", err)
	}
	return db, nil
}

// writeCertificates creates a CA and a server certificate for localhost and 127.0.0.1 signed by it.
func (s *Server) writeCertificates() error {
	ca, err := pki.NewCA("mysqltest CA", 24*time.Hour)
	if err != nil {
		return err
	}
	server, err := ca.Issue("localhost", []string{"localhost", "127.0.0.1"}, 24*time.Hour)
	if err != nil {
		return err
	}
	client, err := ca.Issue(s.User, nil, 24*time.Hour)
	if err != nil {
		return err
	}
	s.CAFile, s.ClientCertFile, s.ClientKeyFile = filepath.Join(s.dir, "ca.crt"), filepath.Join(s.dir, "client.crt"),
		filepath.Join(s.dir, "client.key")
	for name, pem := range map[string][]byte{"ca.crt": ca.CertPEM, "server.crt": server.CertPEM, "server.key": server.KeyPEM,
		"client.crt": client.CertPEM, "client.key": client.KeyPEM} {
		if err := os.WriteFile(filepath.Join(s.dir, name), pem, 0o600); err != nil {
			return err
		}
	}
	return os.Chmod(s.CAFile, 0o644)
}

// serverUser is who runs mariadbd: the caller, or Debian's mysql user when the caller is root
// (mariadbd refuses root unless told to).
func serverUser() (string, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return "", err
		}
		return u.Username, nil
	}
	if _, err := user.Lookup("mysql"); err != nil {
		return "", errors.New("running as root needs Debian's mysql user to run mariadbd (hack/deps.sh installs mariadb-server)")
	}
	return "mysql", nil
}

func chownTree(dir, owner string) error {
	u, err := user.Lookup(owner)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}
