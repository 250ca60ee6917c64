package runner

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// preflightEngine is the preflight of the run's engine.
func preflightEngine(ctx context.Context, eng string, conn engine.Connection, wait, retryEvery time.Duration) (*session, error) {
	if eng == runspec.EngineMySQL {
		return preflightMySQL(ctx, conn, wait, retryEvery)
	}
	return preflight(ctx, wait, retryEvery)
}

// preflightMySQL connects to a MySQL-protocol server (MySQL, MariaDB) with the connection the
// transport described until it answers or the wait times out, and returns its version and the
// TLS session it reports for that connection. Errors that waiting cannot fix (authentication, a
// host or database the server refuses, TLS verification) fail at once. The Go MySQL driver sends
// no clear-text password (AllowCleartextPasswords stays off), whatever the server asks.
func preflightMySQL(ctx context.Context, conn engine.Connection, wait, retryEvery time.Duration) (*session, error) {
	cfg, err := mysqlConfig(conn)
	if err != nil {
		return nil, &FailureError{Reason: conditions.ReasonTLSError, Message: err.Error()}
	}
	deadline := time.Now().Add(wait)
	for {
		sess, err := mysqlSession(ctx, cfg)
		if err == nil {
			return sess, nil
		}
		failure := classifyMySQL(err)
		if failure.Reason != conditions.ReasonServerUnreachable || time.Now().Add(retryEvery).After(deadline) {
			if failure.Reason == conditions.ReasonServerUnreachable {
				failure.Message = fmt.Sprintf("server %s did not answer within %s: %s; "+
					"check that the Service exists and the server accepts connections", cfg.Addr, wait, failure.Message)
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

// mysqlConfig is the driver's configuration of the connection. TLS follows libpq's sslmode, as
// the transports write it: verify-ca checks the certificate's chain against the server's CA,
// verify-full its name too; require encrypts without checking.
func mysqlConfig(conn engine.Connection) (*mysql.Config, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = conn.User, conn.Password, conn.Database
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(conn.Dial(), strconv.Itoa(conn.Port))
	cfg.Timeout = 10 * time.Second
	if !conn.Encrypted() {
		return cfg, nil
	}
	tc := &tls.Config{ServerName: conn.Host, MinVersion: tls.VersionTLS12}
	if conn.SSLCert != "" && conn.SSLKey != "" {
		pair, err := tls.LoadX509KeyPair(conn.SSLCert, conn.SSLKey)
		if err != nil {
			return nil, fmt.Errorf("cannot read the client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	switch conn.SSLMode {
	case "verify-ca", "verify-full":
		pem, err := os.ReadFile(conn.SSLRootCert)
		if err != nil {
			return nil, fmt.Errorf("cannot read the server's CA: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the server's CA %s holds no certificate", conn.SSLRootCert)
		}
		if conn.SSLMode == "verify-ca" {
			// The chain, not the name: what verify-ca means to libpq.
			tc.InsecureSkipVerify = true
			tc.VerifyPeerCertificate = verifyChain(tc.RootCAs)
		}
	default:
		tc.InsecureSkipVerify = true
	}
	cfg.TLS = tc
	return cfg, nil
}

// verifyChain checks that the server's certificate chains up to roots, whatever its name.
func verifyChain(roots *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("tls: the server sent no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, b := range raw {
			c, err := x509.ParseCertificate(b)
			if err != nil {
				return fmt.Errorf("tls: %w", err)
			}
			certs[i] = c
		}
		intermediates := x509.NewCertPool()
		for _, c := range certs[1:] {
			intermediates.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates})
		return err
	}
}

// mysqlSession opens one connection and reads what the server says of it.
func mysqlSession(ctx context.Context, cfg *mysql.Config) (*session, error) {
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	defer func() { _ = db.Close() }()
	cctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	c, err := db.Conn(cctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }()
	sess := &session{probe: mysqlProbe{cfg}}
	var version, cipher string
	err = c.QueryRowContext(cctx, `SELECT VERSION(),
		coalesce((SELECT variable_value FROM information_schema.session_status WHERE variable_name = 'Ssl_version'), ''),
		coalesce((SELECT variable_value FROM information_schema.session_status WHERE variable_name = 'Ssl_cipher'), '')`).
		Scan(&sess.serverVersion, &version, &cipher)
	if err != nil {
		return nil, err
	}
	if version != "" {
		sess.serverTLS = &report.TLS{Version: version, Cipher: cipher}
	}
	return sess, nil
}

// classifyMySQL maps a connection error to a failure reason with a message that says what to do.
func classifyMySQL(err error) *FailureError {
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		switch my.Number {
		case 1045:
			return &FailureError{Reason: conditions.ReasonAuthenticationFailed,
				Message: my.Message + ": check the user name and password in the credentials Secret"}
		case 1044, 1049:
			return &FailureError{Reason: conditions.ReasonConnectionRejected,
				Message: my.Message + ": check the database name in spec.server and the user's grants"}
		case 1130:
			return &FailureError{Reason: conditions.ReasonConnectionRejected,
				Message: my.Message + ": the server's accounts do not admit this user from this host"}
		case 3159:
			return &FailureError{Reason: conditions.ReasonConnectionRejected,
				Message: my.Message + ": the server requires TLS; use a tls transport"}
		case 1040, 1053:
			// Too many connections, or shutting down: waiting may help.
			return &FailureError{Reason: conditions.ReasonServerUnreachable, Message: my.Message}
		default:
			return &FailureError{Reason: conditions.ReasonConnectionRejected, Message: my.Message}
		}
	}
	if errors.Is(err, mysql.ErrCleartextPassword) {
		return &FailureError{Reason: conditions.ReasonClearTextPassword, Message: "the server asked for the password in " +
			"clear text, and the runner did not send it (" + err.Error() + "): give the user a challenge-response " +
			"authentication plugin (mysql_native_password, caching_sha2_password, ed25519)"}
	}
	if isTLSError(err) {
		return &FailureError{Reason: conditions.ReasonTLSError,
			Message: err.Error() + ": check the server certificate, the CA Secret and the sslMode"}
	}
	return &FailureError{Reason: conditions.ReasonServerUnreachable, Message: err.Error()}
}
