package runner

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
)

// FailureError carries a classified failure to the report.
type FailureError struct {
	Reason  string
	Message string
}

func (e *FailureError) Error() string { return e.Reason + ": " + e.Message }

// session is what the preflight connection learned.
type session struct {
	// config is the connection's configuration, from libpq's environment; nil for another engine.
	config *pgx.ConnConfig
	// probe opens connections configured as this one, for the measure of the path.
	probe pathProbe
	// serverTLS is the TLS session the server reports for the connection (pg_stat_ssl): through a
	// pooler, that of the pooler's connection to the server.
	serverTLS *report.TLS
	// clientTLS is the runner's own TLS session on its socket: through a pooler, with the pooler.
	clientTLS *report.TLS
	// serverVersion is the server's server_version.
	serverVersion string
}

// preflight connects with the environment's libpq settings until the server answers or the wait
// times out, and returns the TLS sessions of that connection. Errors that waiting cannot fix
// (authentication, pg_hba, TLS verification) fail at once.
func preflight(ctx context.Context, wait time.Duration, retryEvery time.Duration) (*session, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, &FailureError{Reason: conditions.ReasonPgbenchError,
			Message: fmt.Sprintf("invalid libpq settings: %v", err)}
	}
	// The simple protocol keeps the check valid through a transaction pooler, where a statement
	// prepared on one server connection may be executed on another.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	if addr := os.Getenv("PGHOSTADDR"); addr != "" {
		// libpq's hostaddr, which pgx does not read: connect there while TLS still checks the
		// certificate against PGHOST (the link proxy's loopback end of a path).
		cfg.LookupFunc = func(context.Context, string) ([]string, error) { return []string{addr}, nil }
	}
	refuseClearTextWithoutTLS(&cfg.Config)
	deadline := time.Now().Add(wait)
	for {
		conn, err := connect(ctx, cfg)
		if err == nil {
			defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
			serverTLS, err := negotiatedTLS(ctx, conn)
			if err != nil {
				return nil, err
			}
			return &session{config: cfg, probe: pgProbe{cfg}, serverTLS: serverTLS, clientTLS: socketTLS(conn),
				serverVersion: conn.PgConn().ParameterStatus("server_version")}, nil
		}
		failure := classify(err)
		if failure.Reason != conditions.ReasonServerUnreachable || time.Now().Add(retryEvery).After(deadline) {
			if failure.Reason == conditions.ReasonServerUnreachable {
				failure.Message = fmt.Sprintf("server %s:%d did not answer within %s: %s; "+
					"check that the Service exists and the server accepts connections",
					cfg.Host, cfg.Port, wait, failure.Message)
			}
			return nil, failure
		}
		select {
		case <-ctx.Done():
			return nil, &FailureError{Reason: conditions.ReasonServerUnreachable, Message: ctx.Err().Error()}
		case <-time.After(retryEvery):
		}
	}
}

func connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	timeout := cfg.ConnectTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return pgx.ConnectConfig(cctx, cfg)
}

func negotiatedTLS(ctx context.Context, conn *pgx.Conn) (*report.TLS, error) {
	var ssl bool
	var version, cipher string
	err := conn.QueryRow(ctx, `SELECT ssl, coalesce(version, ''), coalesce(cipher, '')
		FROM pg_stat_ssl WHERE pid = pg_backend_pid()`).Scan(&ssl, &version, &cipher)
	if err != nil {
		return nil, &FailureError{Reason: conditions.ReasonPgbenchError,
			Message: fmt.Sprintf("cannot read pg_stat_ssl: %v", err)}
	}
	if !ssl {
		return nil, nil
	}
	return &report.TLS{Version: version, Cipher: cipher}, nil
}

// socketTLS is the TLS session of the connection's own socket, in pg_stat_ssl's notation.
func socketTLS(conn *pgx.Conn) *report.TLS {
	tc, ok := conn.PgConn().Conn().(*tls.Conn)
	if !ok {
		return nil
	}
	state := tc.ConnectionState()
	version := strings.Replace(tls.VersionName(state.Version), "TLS ", "TLSv", 1)
	return &report.TLS{Version: version, Cipher: tls.CipherSuiteName(state.CipherSuite)}
}

// noClearText is libpq's require_auth for "anything but a clear-text password".
const noClearText = "!password"

// refuseClearTextWithoutTLS has the preflight refuse to send the password in clear text unless a
// TLS session with a verified server protects it (libpq 15's pgbench cannot refuse it;
// require_auth came with libpq 16): a listener at spec.server's host, anything on the path past a
// tunnel's end, or, over TLS that verifies nothing (sslmode require, prefer), whoever answers the
// handshake in the server's place would read it. The preflight goes first, through the same path,
// so a server that asks for it fails the benchmark before pgbench connects. Each attempt decides
// by its own socket: sslmode=prefer's plain fallback is refused too.
func refuseClearTextWithoutTLS(cfg *pgconn.Config) {
	verified := verifiesServer(os.Getenv("PGSSLMODE"))
	previous := cfg.AfterNetConnect
	cfg.AfterNetConnect = func(ctx context.Context, c *pgconn.Config, conn net.Conn) (net.Conn, error) {
		if _, encrypted := conn.(*tls.Conn); encrypted && verified {
			c.RequireAuth = ""
		} else {
			c.RequireAuth = noClearText
		}
		if previous != nil {
			return previous(ctx, c, conn)
		}
		return conn, nil
	}
}

// verifiesServer says whether libpq's sslmode checks who the server is: verify-ca its
// certificate's chain, verify-full its name too.
func verifiesServer(sslmode string) bool {
	return sslmode == "verify-ca" || sslmode == "verify-full"
}

// classify maps a connection error to a failure reason with a message that says what to do.
func classify(err error) *FailureError {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "28P01":
			return &FailureError{Reason: conditions.ReasonAuthenticationFailed,
				Message: pgErr.Message + ": check the user name and password in the credentials Secret"}
		case pgErr.Code == "28000" || strings.HasPrefix(pgErr.Code, "28"):
			return &FailureError{Reason: conditions.ReasonConnectionRejected,
				Message: pgErr.Message + ": the server's pg_hba.conf rejects this client, user or TLS mode"}
		case pgErr.Code == "3D000":
			return &FailureError{Reason: conditions.ReasonConnectionRejected,
				Message: pgErr.Message + ": check the database name in spec.server"}
		case pgErr.Code == "57P03" || pgErr.Code == "53300":
			// The server is starting up or full: waiting may help.
			return &FailureError{Reason: conditions.ReasonServerUnreachable, Message: pgErr.Message}
		default:
			return &FailureError{Reason: conditions.ReasonConnectionRejected, Message: pgErr.Message}
		}
	}
	if strings.Contains(err.Error(), "require_auth") {
		return &FailureError{Reason: conditions.ReasonClearTextPassword, Message: "the server asked for the password in " +
			"clear text over a connection no verified TLS protects, and the runner did not send it (" + err.Error() + "): use a " +
			"tls transport with sslMode verify-ca or verify-full, or have the server ask for scram-sha-256 " +
			"(password_encryption and pg_hba.conf)"}
	}
	if isTLSError(err) {
		return &FailureError{Reason: conditions.ReasonTLSError,
			Message: err.Error() + ": check the server certificate, the CA Secret and the sslMode"}
	}
	return &FailureError{Reason: conditions.ReasonServerUnreachable, Message: err.Error()}
}

func isTLSError(err error) bool {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verify) || errors.As(err, &record) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "server refused TLS connection") || strings.Contains(msg, "tls: ")
}
