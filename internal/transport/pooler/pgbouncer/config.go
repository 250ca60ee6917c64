// Package pgbouncer configures and observes the PgBouncer of the pooler transport: it renders
// pgbouncer.ini and the auth file from settings (never from a file a user could inject into), and
// reads the admin console's SHOW STATS and SHOW SERVERS as evidence that traffic went through it.
package pgbouncer

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Authentication methods PgBouncer asks its clients for.
const (
	// AuthSCRAM makes every client login run SCRAM-SHA-256 against the pooler.
	AuthSCRAM = "scram-sha-256"
	// AuthTrust accepts any client that can reach the listener: only for a pooler that listens
	// on the pod's loopback, where the pod is the trust boundary.
	AuthTrust = "trust"
)

// Config is one PgBouncer's settings.
type Config struct {
	// ListenAddr and ListenPort are where clients connect.
	ListenAddr string
	ListenPort int
	// ServerHost and ServerPort are the PostgreSQL server; every database name a client asks for
	// is passed through to the same name there.
	ServerHost string
	ServerPort int
	// User is the only user known to the pooler: it logs into the server as that user, with the
	// password written to the auth file, and may read the admin console.
	User string
	// ClientAuth is AuthSCRAM or AuthTrust.
	ClientAuth string
	// PoolMode is session or transaction.
	PoolMode string
	// PoolSize is default_pool_size: server connections per user and database.
	PoolSize int
	// MaxClientConn is max_client_conn.
	MaxClientConn int
	// ClientTLSCertFile and ClientTLSKeyFile, when set, make TLS required from clients.
	ClientTLSCertFile string
	ClientTLSKeyFile  string
	// ServerTLSMode is server_tls_sslmode: disable, require or verify-full; ServerCAFile is the CA
	// that verify-full checks the server's certificate against.
	ServerTLSMode string
	ServerCAFile  string
}

// Files are the names of what Write puts in its folder.
const (
	IniFile  = "pgbouncer.ini"
	AuthFile = "userlist.txt"
)

// Validate reports settings PgBouncer would reject or misread, before it starts.
func (c Config) Validate() error {
	var errs []string
	if c.ListenPort < 1 || c.ListenPort > 65535 || c.ServerPort < 1 || c.ServerPort > 65535 {
		errs = append(errs, "ports must be within 1..65535")
	}
	if c.ServerHost == "" || c.ListenAddr == "" {
		errs = append(errs, "the listen address and the server host are required")
	}
	if c.User == "" {
		errs = append(errs, "the user is required")
	}
	if c.ClientAuth != AuthSCRAM && c.ClientAuth != AuthTrust {
		errs = append(errs, fmt.Sprintf("client authentication %q is not %s or %s", c.ClientAuth, AuthSCRAM, AuthTrust))
	}
	if c.PoolMode != "session" && c.PoolMode != "transaction" {
		errs = append(errs, fmt.Sprintf("pool mode %q is not session or transaction", c.PoolMode))
	}
	if c.PoolSize < 1 || c.MaxClientConn < 1 {
		errs = append(errs, "the pool size and the client connection limit must be positive")
	}
	if (c.ClientTLSCertFile == "") != (c.ClientTLSKeyFile == "") {
		errs = append(errs, "client TLS needs both a certificate and a key")
	}
	switch c.ServerTLSMode {
	case "disable", "require":
	case "verify-full":
		if c.ServerCAFile == "" {
			errs = append(errs, "server TLS verify-full needs the server's CA file")
		}
	default:
		errs = append(errs, fmt.Sprintf("server TLS mode %q is not disable, require or verify-full", c.ServerTLSMode))
	}
	// Values are written unquoted into an ini file: a newline or a quote would inject settings.
	for _, v := range []string{c.ListenAddr, c.ServerHost, c.User, c.ClientTLSCertFile, c.ClientTLSKeyFile, c.ServerCAFile} {
		if strings.ContainsAny(v, "\n\r\"'=;#") || strings.TrimSpace(v) != v {
			errs = append(errs, fmt.Sprintf("%q contains characters not allowed in pgbouncer.ini", v))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid PgBouncer settings: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Ini renders pgbouncer.ini, with the auth file at authFile.
func (c Config) Ini(authFile string) string {
	settings := map[string]string{
		"listen_addr": c.ListenAddr,
		"listen_port": strconv.Itoa(c.ListenPort),
		// No Unix socket: the image's /var/run/postgresql is not writable, and nothing uses it.
		"unix_socket_dir":   "",
		"auth_type":         c.ClientAuth,
		"auth_file":         authFile,
		"admin_users":       c.User,
		"pool_mode":         c.PoolMode,
		"default_pool_size": strconv.Itoa(c.PoolSize),
		"max_client_conn":   strconv.Itoa(c.MaxClientConn),
		// pgx and JDBC send it at startup; PgBouncer refuses unknown startup parameters otherwise.
		"ignore_startup_parameters": "extra_float_digits",
		// A line per login would add log I/O to every connection the benchmark measures.
		"log_connections":    "0",
		"log_disconnections": "0",
		"server_tls_sslmode": c.ServerTLSMode,
	}
	if c.ServerCAFile != "" && c.ServerTLSMode == "verify-full" {
		settings["server_tls_ca_file"] = c.ServerCAFile
	}
	if c.ClientTLSCertFile != "" {
		settings["client_tls_sslmode"] = "require"
		settings["client_tls_cert_file"] = c.ClientTLSCertFile
		settings["client_tls_key_file"] = c.ClientTLSKeyFile
	} else {
		settings["client_tls_sslmode"] = "disable"
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("; Written by tunnelbench-runner pgbouncer.\n[databases]\n")
	fmt.Fprintf(&b, "* = host=%s port=%d\n\n[pgbouncer]\n", c.ServerHost, c.ServerPort)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, settings[k])
	}
	return b.String()
}

// AuthLine is the auth file's line for a user: both fields double-quoted, quotes doubled.
func AuthLine(user, password string) string {
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	return q(user) + " " + q(password) + "\n"
}

// Write validates the settings and writes pgbouncer.ini and the auth file into dir, readable by
// the owner only (the auth file holds the password), and returns the ini file's path.
func Write(dir string, c Config, password string) (string, error) {
	if err := c.Validate(); err != nil {
		return "", err
	}
	if strings.ContainsAny(password, "\n\r") {
		return "", fmt.Errorf("the password contains a line break, which the auth file cannot hold")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("cannot create %s: %w", dir, err)
	}
	auth := filepath.Join(dir, AuthFile)
	if err := os.WriteFile(auth, []byte(AuthLine(c.User, password)), 0o600); err != nil {
		return "", fmt.Errorf("cannot write the auth file: %w", err)
	}
	ini := filepath.Join(dir, IniFile)
	if err := os.WriteFile(ini, []byte(c.Ini(auth)), 0o600); err != nil {
		return "", fmt.Errorf("cannot write pgbouncer.ini: %w", err)
	}
	return ini, nil
}
