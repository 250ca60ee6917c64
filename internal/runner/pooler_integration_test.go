package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/pgbouncer"
)

// TestRunThroughRealPgBouncer runs the load, with reconnections, and a connection storm through a
// real PgBouncer in front of a PostgreSQL that accepts only TLS, in the two ways the operator
// configures it: SCRAM and TLS from clients (placement service) and loopback trust (sidecar).
func TestRunThroughRealPgBouncer(t *testing.T) {
	pgtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{RequireTLS: true})
	setEnv(t, s.Env("require"))
	if _, out, err := runOnce(t, Options{Run: runspec.Run{Init: true, Scale: 1, Tunnels: 1}}); err != nil {
		t.Fatalf("pgbench -i failed: %v\n%s", err, out)
	}
	certDir, err := pgtest.ReadableDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(certDir) })
	certFile, keyFile, err := pgtest.WritePoolerCertificate(certDir, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	serverCA, err := os.ReadFile(s.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(certDir, "server-ca.crt"), serverCA, 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		cfg       pgbouncer.Config
		sslmode   string
		password  string
		protocol  string
		clientTLS bool
	}{
		{name: "service: SCRAM and TLS from clients, verify-full to the server", sslmode: "require", password: s.Password,
			protocol: "prepared", clientTLS: true,
			cfg: pgbouncer.Config{ClientAuth: pgbouncer.AuthSCRAM, PoolMode: "session",
				ClientTLSCertFile: certFile, ClientTLSKeyFile: keyFile,
				ServerTLSMode: "verify-full", ServerCAFile: filepath.Join(certDir, "server-ca.crt")}},
		{name: "sidecar: loopback trust, transaction pooling", sslmode: "disable", password: "unused-with-trust",
			protocol: "extended",
			cfg:      pgbouncer.Config{ClientAuth: pgbouncer.AuthTrust, PoolMode: "transaction", ServerTLSMode: "require"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.ListenAddr, cfg.ServerHost, cfg.ServerPort, cfg.User = "127.0.0.1", "127.0.0.1", s.Port, s.User
			// Session pooling needs a server connection per client; transaction pooling shares two.
			cfg.PoolSize, cfg.MaxClientConn = 2, 50
			if cfg.PoolMode == "session" {
				cfg.PoolSize = 4
			}
			bouncer, err := pgtest.StartPgBouncer(cfg, s.Password)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(bouncer.Stop)
			setEnv(t, s.Env(tt.sslmode))
			setEnv(t, map[string]string{"PGPORT": strconv.Itoa(bouncer.Port), "PGPASSWORD": tt.password})

			rep, out, err := runOnce(t, Options{Run: runspec.Run{Pooler: runspec.PoolerPgBouncer, PoolerPart: "pgbouncer", Storm: 150, Tunnels: 1,
				Load: runspec.Load{Builtin: "select-only", Protocol: tt.protocol, Reconnect: true, Clients: 4, Threads: 2,
					Duration: 2 * time.Second}}})
			if err != nil {
				t.Fatalf("run failed: %v\n%s\npgbouncer log:\n%s", err, out, bouncer.Log())
			}
			res, p := rep.Result, rep.Pooler
			if res == nil || res.TPS <= 0 || !res.Reconnect || res.ConnectionTimeMs <= 0 {
				t.Fatalf("result %+v", res)
			}
			if p == nil || !p.Counted {
				t.Fatalf("no pooler evidence: %+v", p)
			}
			// Its clients' wait for a server connection, read from SHOW STATS, for the budget.
			if !p.WaitCounted || p.WaitSeconds < 0 || p.Part != "pgbouncer" {
				t.Errorf("the pooler's wait: counted %v, %.6f s, part %q", p.WaitCounted, p.WaitSeconds, p.Part)
			}
			if !strings.HasPrefix(p.Version, "PgBouncer 1.") {
				t.Errorf("pooler version %q", p.Version)
			}
			// Every transaction pgbench counted went through the pooler (which also counts the
			// failed ones and pgbench's own setup queries).
			if p.Transactions < res.Transactions {
				t.Errorf("the pooler counted %d transactions, pgbench %d", p.Transactions, res.Transactions)
			}
			// Reconnecting clients do not make server connections: the pool holds at most its size.
			if p.ServerConnections < 1 || p.ServerConnections > cfg.PoolSize {
				t.Errorf("the pooler holds %d server connections, pool size %d", p.ServerConnections, cfg.PoolSize)
			}
			if !strings.HasPrefix(p.ServerTLS, "TLSv1.") || rep.TLS == nil {
				t.Errorf("server hop TLS: pooler says %q, pg_stat_ssl says %+v", p.ServerTLS, rep.TLS)
			}
			if (p.ClientTLS != nil) != tt.clientTLS || tt.clientTLS && !strings.HasPrefix(p.ClientTLS.Version, "TLSv1.") {
				t.Errorf("client hop TLS = %+v, want TLS %v", p.ClientTLS, tt.clientTLS)
			}
			st := rep.Storm
			if st == nil || st.Connections != 150 || st.Failed != 0 || st.PerSecond <= 0 || st.MeanConnectMs <= 0 ||
				!strings.Contains(st.Command, "-C") || len(st.BatchConnectMs) != StormBatches {
				t.Errorf("storm %+v", st)
			}
			for _, ms := range st.BatchConnectMs {
				if ms <= 0 {
					t.Errorf("a batch's mean connect time %v: %+v", ms, st)
				}
			}
			if strings.Contains(out, s.Password) {
				t.Error("the password leaked into the output")
			}
		})
	}
}
