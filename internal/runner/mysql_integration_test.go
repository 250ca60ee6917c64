package runner

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine/sysbench"
	"github.com/tunnelbench/tunnelbench/internal/testing/mysqltest"
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
