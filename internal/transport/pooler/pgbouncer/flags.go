package pgbouncer

import (
	"flag"
	"fmt"
	"net"
	"strconv"
)

// The pooler's settings travel as command-line flags of `tunnelbench-runner pgbouncer`, from the
// operator's pod specs to the container: Args renders them and BindFlags reads them back, so both
// ends share one definition. The user and password are not among them: they come from libpq's
// environment (PGUSER, PGPASSWORD), which the pod fills from the credentials Secret by reference.

// Args renders the settings as flags.
func (c Config) Args() []string {
	args := []string{
		"--listen=" + net.JoinHostPort(c.ListenAddr, strconv.Itoa(c.ListenPort)),
		"--server=" + net.JoinHostPort(c.ServerHost, strconv.Itoa(c.ServerPort)),
		"--client-auth=" + c.ClientAuth,
		"--pool-mode=" + c.PoolMode,
		fmt.Sprintf("--pool-size=%d", c.PoolSize),
		fmt.Sprintf("--max-client-conn=%d", c.MaxClientConn),
		"--server-tls=" + c.ServerTLSMode,
	}
	if c.ServerCAFile != "" {
		args = append(args, "--server-ca="+c.ServerCAFile)
	}
	if c.ClientTLSCertFile != "" {
		args = append(args, "--client-tls-cert="+c.ClientTLSCertFile, "--client-tls-key="+c.ClientTLSKeyFile)
	}
	return args
}

// Flags holds the parsed flags until Config is called.
type Flags struct {
	listen, server string
	c              Config
}

// BindFlags declares the flags Args renders. They have no defaults of their own: the operator
// always passes every setting (the API's defaults live on the API type), and Config's validation
// refuses a missing one instead of quietly inventing it.
func BindFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.listen, "listen", "", "address:port PgBouncer listens on")
	fs.StringVar(&f.server, "server", "", "the PostgreSQL server's host:port")
	fs.StringVar(&f.c.ClientAuth, "client-auth", "", "client authentication: scram-sha-256 or trust")
	fs.StringVar(&f.c.PoolMode, "pool-mode", "", "session or transaction")
	fs.IntVar(&f.c.PoolSize, "pool-size", 0, "server connections per user and database")
	fs.IntVar(&f.c.MaxClientConn, "max-client-conn", 0, "client connection limit")
	fs.StringVar(&f.c.ServerTLSMode, "server-tls", "", "server_tls_sslmode: disable, require or verify-full")
	fs.StringVar(&f.c.ServerCAFile, "server-ca", "", "CA file for server-tls verify-full")
	fs.StringVar(&f.c.ClientTLSCertFile, "client-tls-cert", "", "certificate presented to clients; requires TLS from them")
	fs.StringVar(&f.c.ClientTLSKeyFile, "client-tls-key", "", "key of client-tls-cert")
	return f
}

// Config returns the parsed settings with the user added.
func (f *Flags) Config(user string) (Config, error) {
	c := f.c
	c.User = user
	var err error
	if c.ListenAddr, c.ListenPort, err = hostPort(f.listen); err != nil {
		return Config{}, fmt.Errorf("--listen: %w", err)
	}
	if c.ServerHost, c.ServerPort, err = hostPort(f.server); err != nil {
		return Config{}, fmt.Errorf("--server: %w", err)
	}
	return c, c.Validate()
}

func hostPort(s string) (string, int, error) {
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return "", 0, fmt.Errorf("port %q is not a number", portText)
	}
	return host, port, nil
}
