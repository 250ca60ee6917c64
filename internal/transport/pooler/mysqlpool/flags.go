package mysqlpool

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
)

// The pooler's settings travel as flags of `tunnelbench-runner mysqlpool`, from the operator's pod
// specs to the container: Settings.Args renders them and BindFlags reads them back, one definition
// for both ends. The user and password are not among them: they come from the environment
// (PGUSER, PGPASSWORD, the names every transport's connection uses), which the pod fills from the
// credentials Secret by reference.

// Server TLS modes, as PgBouncer's server_tls_sslmode names them.
const (
	ServerTLSDisable    = "disable"
	ServerTLSRequire    = "require"
	ServerTLSVerifyFull = "verify-full"
)

// Settings are the pooler's flags.
type Settings struct {
	// Listen is the address:port clients connect to; Stats the loopback address:port of its
	// counters (JSON), empty for none.
	Listen, Stats string
	// Server is the server's host:port.
	Server   string
	PoolSize int
	// MaxClients bounds the client connections at once.
	MaxClients int
	// ServerTLS is disable, require (encrypted, the server unverified) or verify-full (its
	// certificate checked against ServerCAFile, for its host name).
	ServerTLS, ServerCAFile string
}

// Args renders the settings as flags.
func (s Settings) Args() []string {
	args := []string{"--listen=" + s.Listen, "--server=" + s.Server, "--pool-size=" + strconv.Itoa(s.PoolSize),
		"--max-clients=" + strconv.Itoa(s.MaxClients), "--server-tls=" + s.ServerTLS}
	if s.ServerCAFile != "" {
		args = append(args, "--server-ca="+s.ServerCAFile)
	}
	if s.Stats != "" {
		args = append(args, "--stats="+s.Stats)
	}
	return args
}

// BindFlags declares the flags Args renders, with no defaults: the operator passes every one, and
// Validate refuses a missing one.
func BindFlags(fs *flag.FlagSet) *Settings {
	s := &Settings{}
	fs.StringVar(&s.Listen, "listen", "", "address:port the pooler listens on")
	fs.StringVar(&s.Stats, "stats", "", "loopback address:port of the pooler's counters (JSON)")
	fs.StringVar(&s.Server, "server", "", "the MySQL server's host:port")
	fs.IntVar(&s.PoolSize, "pool-size", 0, "server connections open at most")
	fs.IntVar(&s.MaxClients, "max-clients", 0, "client connections at once, at most")
	fs.StringVar(&s.ServerTLS, "server-tls", "", "TLS to the server: disable, require or verify-full")
	fs.StringVar(&s.ServerCAFile, "server-ca", "", "CA file for server-tls verify-full")
	return s
}

// Validate checks the settings as the flags gave them.
func (s Settings) Validate() error {
	for name, addr := range map[string]string{"--listen": s.Listen, "--server": s.Server} {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("%s %q: %w", name, addr, err)
		}
	}
	if s.PoolSize < 1 {
		return fmt.Errorf("--pool-size %d: at least 1", s.PoolSize)
	}
	if s.MaxClients < 1 {
		return fmt.Errorf("--max-clients %d: at least 1", s.MaxClients)
	}
	switch s.ServerTLS {
	case ServerTLSDisable, ServerTLSRequire:
	case ServerTLSVerifyFull:
		if s.ServerCAFile == "" {
			return errors.New("--server-tls verify-full needs --server-ca")
		}
	default:
		return fmt.Errorf("--server-tls %q: disable, require or verify-full", s.ServerTLS)
	}
	return nil
}

// Config is the pool the settings describe, logged in as user with password.
func (s Settings) Config(user, password string) (Config, error) {
	if err := s.Validate(); err != nil {
		return Config{}, err
	}
	cfg := Config{Server: s.Server, User: user, Password: password, PoolSize: s.PoolSize, MaxClients: s.MaxClients}
	switch s.ServerTLS {
	case ServerTLSRequire:
		// Encrypted, as PgBouncer's require: the server's certificate is not checked.
		cfg.ServerTLS = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // sslmode require
	case ServerTLSVerifyFull:
		pem, err := os.ReadFile(s.ServerCAFile)
		if err != nil {
			return Config{}, err
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return Config{}, fmt.Errorf("--server-ca %s holds no certificate", s.ServerCAFile)
		}
		host, _, _ := net.SplitHostPort(s.Server)
		cfg.ServerTLS = &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12}
	}
	return cfg, nil
}
