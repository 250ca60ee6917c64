package engine

import (
	"strconv"
)

// Connection is the server a transport points the runner at. Every transport writes it as libpq's
// environment variables (internal/transport: PGHOST, PGPORT, …, the credentials from their Secret),
// which the PostgreSQL engine's tools read as they are and another engine's generator translates
// into its own settings: one description of a path for every engine.
type Connection struct {
	// Host is the name to connect to and, with TLS, to verify the certificate against; HostAddr,
	// when set, is the address actually dialled (libpq's hostaddr).
	Host, HostAddr string
	Port           int
	Database       string
	User, Password string
	// SSLMode is libpq's: disable, prefer, require, verify-ca or verify-full.
	SSLMode string
	// SSLRootCert is the server's CA file; SSLCert and SSLKey the client's certificate and key.
	SSLRootCert, SSLCert, SSLKey string
}

// ConnectionFrom reads the connection from libpq's variables, through getenv (os.Getenv).
func ConnectionFrom(getenv func(string) string) Connection {
	port, err := strconv.Atoi(getenv("PGPORT"))
	if err != nil {
		port = 0
	}
	return Connection{Host: getenv("PGHOST"), HostAddr: getenv("PGHOSTADDR"), Port: port, Database: getenv("PGDATABASE"),
		User: getenv("PGUSER"), Password: getenv("PGPASSWORD"), SSLMode: getenv("PGSSLMODE"),
		SSLRootCert: getenv("PGSSLROOTCERT"), SSLCert: getenv("PGSSLCERT"), SSLKey: getenv("PGSSLKEY")}
}

// Dial is the address to connect to: HostAddr when set, else Host.
func (c Connection) Dial() string {
	if c.HostAddr != "" {
		return c.HostAddr
	}
	return c.Host
}

// Encrypted says whether the mode asks for TLS: any but disable (prefer tries it first).
func (c Connection) Encrypted() bool {
	return c.SSLMode != "" && c.SSLMode != "disable"
}
