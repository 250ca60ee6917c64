package pgbouncer_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/pgbouncer"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/pgbouncer/console"
)

// These tests run the real PgBouncer (Debian's) in front of a real PostgreSQL, configured by this
// package, with TLS on either hop.

func TestPgBouncerHops(t *testing.T) {
	pgtest.SkipIfShort(t)
	cases := []struct {
		name       string
		clientAuth string
		clientTLS  bool
		serverTLS  string
	}{
		{"plain both hops, SCRAM", pgbouncer.AuthSCRAM, false, "disable"},
		{"TLS both hops, SCRAM", pgbouncer.AuthSCRAM, true, "verify-full"},
		{"trust on loopback, TLS to the server", pgbouncer.AuthTrust, false, "require"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			server, err := pgtest.StartTemp(pgtest.Options{RequireTLS: tc.serverTLS != "disable"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(server.Stop)
			cfg := pgbouncer.Config{
				ListenAddr: "127.0.0.1", ServerHost: "127.0.0.1", ServerPort: server.Port, User: server.User,
				ClientAuth: tc.clientAuth, PoolMode: "transaction", PoolSize: 2, MaxClientConn: 20,
				ServerTLSMode: tc.serverTLS,
			}
			certDir := readableDir(t)
			if tc.serverTLS == "verify-full" {
				cfg.ServerCAFile = copyFile(t, server.CAFile, certDir)
			}
			if tc.clientTLS {
				if cfg.ClientTLSCertFile, cfg.ClientTLSKeyFile, err = pgtest.WritePoolerCertificate(certDir, "127.0.0.1"); err != nil {
					t.Fatal(err)
				}
			}
			bouncer, err := pgtest.StartPgBouncer(cfg, server.Password)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(bouncer.Stop)

			connCfg := poolerConfig(t, bouncer.Port, server, server.Password, tc.clientTLS)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			before, err := console.Observe(ctx, connCfg)
			if err != nil {
				t.Fatalf("%v; pgbouncer log:\n%s", err, bouncer.Log())
			}
			conn, err := pgx.ConnectConfig(ctx, connCfg)
			if err != nil {
				t.Fatalf("cannot connect through PgBouncer: %v; its log:\n%s", err, bouncer.Log())
			}
			defer func() { _ = conn.Close(ctx) }()
			if _, ok := conn.PgConn().Conn().(*tls.Conn); ok != tc.clientTLS {
				t.Errorf("client hop TLS = %v, want %v", ok, tc.clientTLS)
			}
			var serverSSL bool
			for range 5 {
				if err := conn.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&serverSSL); err != nil {
					t.Fatal(err)
				}
			}
			if serverSSL != (tc.serverTLS != "disable") {
				t.Errorf("server hop TLS (pg_stat_ssl) = %v, want %v", serverSSL, tc.serverTLS != "disable")
			}
			after, err := console.Observe(ctx, connCfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := after.Transactions - before.Transactions; got < 5 {
				t.Errorf("SHOW STATS counted %d transactions for the 5 queries sent", got)
			}
			if after.ServerConnections < 1 {
				t.Errorf("SHOW SERVERS lists %d connections, want at least 1", after.ServerConnections)
			}
			if (after.ServerTLS != "") != (tc.serverTLS != "disable") {
				t.Errorf("SHOW SERVERS tls = %q with server TLS %s", after.ServerTLS, tc.serverTLS)
			}

			wrong := poolerConfig(t, bouncer.Port, server, "not-the-password", tc.clientTLS)
			_, err = pgx.ConnectConfig(ctx, wrong)
			if tc.clientAuth == pgbouncer.AuthSCRAM && err == nil {
				t.Errorf("a wrong password was accepted by a SCRAM pooler")
			}
			if tc.clientAuth == pgbouncer.AuthTrust && err != nil {
				t.Errorf("a trust pooler refused a client: %v", err)
			}
		})
	}
}

func poolerConfig(t *testing.T, port int, server *pgtest.Server, password string, clientTLS bool) *pgx.ConnConfig {
	t.Helper()
	sslmode := "disable"
	if clientTLS {
		sslmode = "require"
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=%s sslmode=%s connect_timeout=5",
		port, server.User, password, server.Database, sslmode))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return cfg
}

func copyFile(t *testing.T, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// readableDir is a folder PgBouncer can read, removed after the test.
func readableDir(t *testing.T) string {
	t.Helper()
	dir, err := pgtest.ReadableDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
