package runner

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine/sysbench"
	"github.com/tunnelbench/tunnelbench/internal/testing/mysqltest"
	"github.com/tunnelbench/tunnelbench/internal/transport/link"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/mysqlpool"
)

// TestRunAgainstRealMariaDB runs the runner with the MySQL engine (sysbench, the Go MySQL
// driver's preflight) against a real MariaDB, as the operator's pod would: the connection in
// libpq's variables, as every transport writes it.
func TestRunAgainstRealMariaDB(t *testing.T) {
	mysqltest.SkipIfShort(t)
	server, err := mysqltest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Stop)
	generator := func(t *testing.T) sysbench.Generator {
		dir := t.TempDir()
		return sysbench.Generator{OptionsFile: filepath.Join(dir, "sysbench.conf"), TLSDir: filepath.Join(dir, "tls")}
	}
	// The data set, once: the scale's 100,000 rows.
	setEnv(t, server.Env("disable"))
	if rep, out, err := runOnce(t, Options{Generator: generator(t),
		Run: runspec.Run{Engine: runspec.EngineMySQL, Init: true, Scale: 1, Tunnels: 1}}); err != nil {
		t.Fatalf("init: %v (%+v)\n%s", err, rep.Failure, out)
	}
	load := runspec.Load{Builtin: "oltp_point_select", Clients: 2, Duration: 3 * time.Second, ProgressInterval: time.Second}

	for _, sslmode := range []string{"disable", "verify-ca"} {
		t.Run(sslmode, func(t *testing.T) {
			setEnv(t, server.Env(sslmode))
			rep, out, err := runOnce(t, Options{Generator: generator(t),
				Run: runspec.Run{Engine: runspec.EngineMySQL, Scale: 1, Load: load, Tunnels: 1}})
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if rep.Result == nil || rep.Result.TPS <= 0 || rep.Result.Clients != 2 || len(rep.Result.Progress) < 2 {
				t.Errorf("result %+v", rep.Result)
			}
			if rep.ServerVersion != server.Version || !strings.HasPrefix(rep.PgbenchVersion, "sysbench 1.") {
				t.Errorf("server %q (want %q), generator %q", rep.ServerVersion, server.Version, rep.PgbenchVersion)
			}
			if encrypted := sslmode != "disable"; (rep.TLS != nil) != encrypted ||
				encrypted && !strings.HasPrefix(rep.TLS.Version, "TLSv1.") {
				t.Errorf("sslmode %s: the server reported TLS %+v", sslmode, rep.TLS)
			}
			if !strings.HasPrefix(rep.Command, "sysbench oltp_point_select ") || rep.Latency != nil {
				t.Errorf("command %q, latency %+v (sysbench logs no transaction)", rep.Command, rep.Latency)
			}
			for _, text := range []string{rep.Command, rep.Executed, out} {
				if strings.Contains(text, server.Password) {
					t.Errorf("the password shows in %q", text)
				}
			}
		})
	}

	t.Run("an inline SQL script: SELECT SLEEP(0.01) lasts at least the sleep", func(t *testing.T) {
		setEnv(t, server.Env("disable"))
		t.Setenv(runspec.ScriptEnv, "SELECT SLEEP(0.01);")
		rep, out, err := runOnce(t, Options{Generator: generator(t), Run: runspec.Run{Engine: runspec.EngineMySQL, Scale: 1,
			Load: runspec.Load{Script: true, Clients: 1, Transactions: 30}, Tunnels: 1}})
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if rep.Result.Transactions != 30 || rep.Result.LatencyAvgMs < 10 {
			t.Errorf("%d transactions at %.3f ms", rep.Result.Transactions, rep.Result.LatencyAvgMs)
		}
	})

	t.Run("through a 10 ms link: the link measured, a point select a transaction crosses it once", func(t *testing.T) {
		asked := runspec.Link{RTT: 10 * time.Millisecond, BitsPerSecond: 20_000_000}
		p, err := link.Start("127.0.0.1:0", net.JoinHostPort(server.Host, strconv.Itoa(server.Port)),
			link.Link{RTT: asked.RTT, BitsPerSecond: asked.BitsPerSecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		_, port, _ := net.SplitHostPort(p.Addr())
		env := server.Env("verify-ca")
		env["PGPORT"] = port
		setEnv(t, env)
		rep, out, err := runOnce(t, Options{Generator: generator(t), Run: runspec.Run{Engine: runspec.EngineMySQL, Scale: 1,
			Load: runspec.Load{Builtin: "oltp_point_select", Clients: 2, Duration: 2 * time.Second}, Tunnels: 1, Link: asked,
			Storm: 20}})
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		l := rep.Link
		if l == nil || rep.TLS == nil {
			t.Fatalf("link %+v, TLS %+v:\n%s", l, rep.TLS, out)
		}
		t.Logf("link %+v, %.1f tps at %.3f ms", *l, rep.Result.TPS, rep.Result.LatencyAvgMs)
		checkMeasuredLink(t, l, asked)
		// The storm: 20 connections one after the other by the runner's driver, each across the link
		// for its TCP and TLS handshakes and its login (at least 2 RTTs, as the link's own
		// measure), then for SELECT 1 (one more): at most 1000 / 30 connections a second.
		st := rep.Storm
		if st == nil || st.Connections != 20 || st.Failed != 0 || st.MeanConnectMs < 20 || st.PerSecond > 1000.0/30 ||
			len(st.BatchConnectMs) != StormBatches || !strings.Contains(st.Command, "SELECT 1") {
			t.Errorf("storm %+v across a 10 ms link", st)
		} else {
			t.Logf("storm: %d connections at %.1f a second, %.3f ms each to connect", st.Connections, st.PerSecond, st.MeanConnectMs)
		}
		// oltp_point_select runs one point select an event (its script sets point_selects to 1,
		// the other OLTP tests' default is 10): one round trip, so 10 to 20 ms a transaction and
		// at most 2 clients / 10 ms = 200 tps.
		if rep.Result.LatencyAvgMs < 10 || rep.Result.LatencyAvgMs > 20 || rep.Result.TPS > 200 {
			t.Errorf("%.1f tps at %.3f ms through a 10 ms link: sysbench did not cross it once a transaction",
				rep.Result.TPS, rep.Result.LatencyAvgMs)
		}
	})

	t.Run("through the MySQL pooler across a 10 ms link: logins cross nothing, two server connections bound the rate", func(t *testing.T) {
		asked := runspec.Link{RTT: 10 * time.Millisecond}
		l, err := link.Start("127.0.0.1:0", net.JoinHostPort(server.Host, strconv.Itoa(server.Port)), link.Link{RTT: asked.RTT})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Stop)
		// The pooler in the runner pod: its clients over loopback, its server connections (TLS,
		// verified) across the link.
		const poolSize = 2
		cfg, err := mysqlpool.Settings{Listen: "127.0.0.1:0", Server: l.Addr(), PoolSize: poolSize, MaxClients: 50,
			ServerTLS: mysqlpool.ServerTLSVerifyFull, ServerCAFile: server.CAFile}.Config(server.User, server.Password)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		pool, listening, _, err := mysqlpool.Start(ctx, cfg, "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		stats := httptest.NewServer(pool.StatsHandler())
		t.Cleanup(stats.Close)
		env := server.Env("disable")
		_, env["PGPORT"], _ = net.SplitHostPort(listening.String())
		setEnv(t, env)
		const clients = 4
		rep, out, err := runOnce(t, Options{Generator: generator(t), Run: runspec.Run{Engine: runspec.EngineMySQL, Scale: 1,
			Load:    runspec.Load{Builtin: "oltp_point_select", Protocol: "simple", Clients: clients, Duration: 2 * time.Second},
			Tunnels: 1, Storm: 100, Pooler: runspec.PoolerMySQL, PoolerMetrics: strings.TrimPrefix(stats.URL, "http://"),
			PoolerPart: "mysqlpool"}})
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		res, p, st := rep.Result, rep.Pooler, rep.Storm
		if p == nil || !p.Counted || st == nil {
			t.Fatalf("pooler %+v, storm %+v:\n%s", p, st, out)
		}
		t.Logf("%s: %.1f tps at %.3f ms with %d clients; pooler %+v; storm %d at %.1f a second, %.3f ms to connect", rep.Command,
			res.TPS, res.LatencyAvgMs, clients, *p, st.Connections, st.PerSecond, st.MeanConnectMs)
		// Every transaction went through the pooler, on at most its two server connections, over
		// TLS; the server's own view of the session says TLS too.
		if p.Transactions < res.Transactions || p.ServerConnections < 1 || p.ServerConnections > poolSize ||
			!strings.HasPrefix(p.ServerTLS, "TLSv1.") || rep.TLS == nil || p.Version != mysqlpool.Name {
			t.Errorf("pooler %+v for %d transactions, the server's TLS %+v", *p, res.Transactions, rep.TLS)
		}
		// A point select crosses the link once, on one of two server connections: at most
		// 2 / 10 ms = 200 tps, whatever the clients; the other two clients wait for a connection.
		if res.TPS > poolSize*100*1.02 || res.LatencyAvgMs < 10 || !p.WaitCounted || p.WaitSeconds <= 0 {
			t.Errorf("%.1f tps at %.3f ms, waited %.3f s: the pool of %d across a 10 ms link allows at most %d tps, and %d clients must wait",
				res.TPS, res.LatencyAvgMs, p.WaitSeconds, poolSize, poolSize*100, clients)
		}
		// A storm's login is the pooler's, over loopback: it crosses no link (well under one RTT);
		// its SELECT 1 crosses it once, so at most 100 connections a second.
		if st.Connections != 100 || st.Failed != 0 || st.MeanConnectMs >= float64(asked.RTT.Milliseconds())/2 || st.PerSecond > 100*1.02 {
			t.Errorf("storm %+v through the pooler across a 10 ms link", st)
		}
	})

	t.Run("a wrong password fails the preflight, named", func(t *testing.T) {
		env := server.Env("disable")
		env["PGPASSWORD"] += "-wrong"
		setEnv(t, env)
		rep, _, err := runOnce(t, Options{Generator: generator(t),
			Run: runspec.Run{Engine: runspec.EngineMySQL, Scale: 1, Load: load, Tunnels: 1}})
		var fe *FailureError
		if !errors.As(err, &fe) || fe.Reason != conditions.ReasonAuthenticationFailed || rep.Result != nil {
			t.Errorf("error %v", err)
		}
	})

	t.Run("another CA in the server's CA's place fails TLS, named", func(t *testing.T) {
		env := server.Env("verify-ca")
		env["PGSSLROOTCERT"] = server.ClientCertFile
		setEnv(t, env)
		_, _, err := runOnce(t, Options{Generator: generator(t),
			Run: runspec.Run{Engine: runspec.EngineMySQL, Scale: 1, Load: load, Tunnels: 1}})
		var fe *FailureError
		if !errors.As(err, &fe) || fe.Reason != conditions.ReasonTLSError {
			t.Errorf("error %v", err)
		}
	})
}
