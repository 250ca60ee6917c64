package sysbench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/testing/mysqltest"
)

// run starts sysbench with args and parses what it printed, as the runner does.
func run(t *testing.T, g Generator, args []string) (*engine.Result, string, error) {
	t.Helper()
	cmd := exec.Command(g.Program(), args...)
	cmd.Dir = g.WorkDir()
	out, runErr := cmd.CombinedOutput()
	res, err := g.Parse(strings.NewReader(string(out)))
	if err == nil && runErr != nil {
		err = runErr
	}
	return res, string(out), err
}

// generator writes the server's connection to a fresh options file.
func generator(t *testing.T, server *mysqltest.Server, sslmode string, edit func(*engine.Connection)) Generator {
	t.Helper()
	dir := t.TempDir()
	g := Generator{OptionsFile: filepath.Join(dir, "sysbench.conf"), TLSDir: filepath.Join(dir, "tls")}
	env := server.Env(sslmode)
	conn := engine.ConnectionFrom(func(k string) string { return env[k] })
	if edit != nil {
		edit(&conn)
	}
	if err := g.Prepare(conn, 1); err != nil {
		t.Fatal(err)
	}
	// A small data set: the scale's table is 100,000 rows, which a test need not wait for.
	text, err := os.ReadFile(g.OptionsFile)
	if err != nil {
		t.Fatal(err)
	}
	text = []byte(strings.Replace(string(text), "table-size=100000", "table-size=2000", 1))
	if err := os.WriteFile(g.OptionsFile, text, 0o600); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSysbenchAgainstRealMariaDB runs Debian's sysbench against a real MariaDB through the
// generator's own options and arguments, and reads its real output.
func TestSysbenchAgainstRealMariaDB(t *testing.T) {
	mysqltest.SkipIfShort(t)
	server, err := mysqltest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Stop)
	g := generator(t, server, "disable", nil)
	if v := g.Version(context.Background()); !strings.HasPrefix(v, "sysbench 1.") {
		t.Fatalf("sysbench --version = %q (hack/deps.sh installs sysbench)", v)
	}

	t.Run("the data set is made twice over, and a built-in load runs on it", func(t *testing.T) {
		for range 2 {
			for _, args := range g.InitArgs(1) {
				if out, err := exec.Command(g.Program(), args...).CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", engine.CommandLine(g.Name(), args), err, out)
				}
			}
		}
		load := runspec.Load{Builtin: "oltp_point_select", Clients: 2, Duration: 3 * time.Second, ProgressInterval: time.Second}
		res, out, err := run(t, g, g.LoadArgs(load))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if res.TPS <= 0 || res.Clients != 2 || len(res.Progress) < 2 || res.LatencyAvgMs <= 0 {
			t.Errorf("result %+v\n%s", res, out)
		}
	})

	t.Run("SELECT SLEEP(0.01): a closed loop's transactions last at least the sleep", func(t *testing.T) {
		_, lua, err := g.Script("SELECT SLEEP(0.01);\n")
		if err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(t.TempDir(), "sleep.lua")
		if err := os.WriteFile(script, []byte(lua), 0o644); err != nil {
			t.Fatal(err)
		}
		// Builtin names the test sysbench runs: here the script's file.
		load := runspec.Load{Builtin: script, Clients: 1, Transactions: 40}
		res, out, err := run(t, g, g.LoadArgs(load))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if res.Transactions != 40 {
			t.Errorf("%d transactions, want 40 (--events counts the run's)", res.Transactions)
		}
		// At least the sleep; the upper side is the machine's, which a test does not bound.
		if res.LatencyAvgMs < 10 || res.TPS > 100 {
			t.Errorf("a 10 ms sleep took %.3f ms on average at %.1f tps", res.LatencyAvgMs, res.TPS)
		}
	})

	t.Run("a tunnel's port overrides the options'", func(t *testing.T) {
		wrong := generator(t, server, "disable", func(c *engine.Connection) { c.Port = 1 })
		_, port := wrong.AtPort(server.Port)
		load := runspec.Load{Builtin: "oltp_point_select", Clients: 1, Transactions: 10}
		if _, out, err := run(t, wrong, append(wrong.LoadArgs(load), port...)); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	})

	t.Run("TLS: verified against the server's CA, with a client certificate", func(t *testing.T) {
		tls := generator(t, server, "verify-ca", nil)
		_, lua, err := tls.Script("SELECT 1 FROM information_schema.session_status " +
			"WHERE variable_name = 'Ssl_version' AND variable_value LIKE 'TLS%' FOR UPDATE;")
		if err != nil {
			t.Fatal(err)
		}
		// The session's own Ssl_version: a query that fails unless this connection is encrypted.
		lua = strings.Replace(lua, "    con:query(statements[i])", "    local rs = con:query(statements[i])\n"+
			"    if rs.nrows ~= 1 then error(\"not encrypted\") end", 1)
		script := filepath.Join(t.TempDir(), "tls.lua")
		if err := os.WriteFile(script, []byte(lua), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, out, err := run(t, tls, tls.LoadArgs(runspec.Load{Builtin: script, Transactions: 3})); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
		// The check itself: on a plain connection the same script fails.
		plain := generator(t, server, "disable", nil)
		if _, out, err := run(t, plain, plain.LoadArgs(runspec.Load{Builtin: script, Transactions: 3})); err == nil ||
			!strings.Contains(out, "not encrypted") {
			t.Errorf("a plain connection passed for an encrypted one: %v\n%s", err, out)
		}
		// Another CA's certificate in the CA's place: sysbench refuses the server.
		other := generator(t, server, "verify-ca", func(c *engine.Connection) { c.SSLRootCert = c.SSLCert })
		_, out, err := run(t, other, other.LoadArgs(runspec.Load{Builtin: "oltp_point_select", Transactions: 1}))
		var runErr *engine.RunError
		if !errors.As(err, &runErr) || !strings.Contains(runErr.LastError, "TLS/SSL error") {
			t.Errorf("a server the CA did not sign: %v\n%s", err, out)
		}
	})

	t.Run("a wrong password says so", func(t *testing.T) {
		bad := generator(t, server, "disable", func(c *engine.Connection) { c.Password += "-wrong" })
		_, out, err := run(t, bad, bad.LoadArgs(runspec.Load{Builtin: "oltp_point_select", Transactions: 1}))
		var runErr *engine.RunError
		if !errors.As(err, &runErr) || !strings.Contains(runErr.LastError, "1045") || bad.ConnectionLost(runErr.LastError) {
			t.Errorf("error %v\n%s", err, out)
		}
		if strings.Contains(out, server.Password) {
			t.Errorf("sysbench's output shows the password")
		}
	})

	t.Run("a server killed under the load is a lost connection", func(t *testing.T) {
		load := runspec.Load{Builtin: "oltp_point_select", Clients: 2, Duration: 5 * time.Second, ProgressInterval: time.Second}
		done := make(chan struct{})
		var out string
		go func() {
			defer close(done)
			_, out, err = run(t, g, g.LoadArgs(load))
		}()
		time.Sleep(1500 * time.Millisecond)
		server.Kill()
		<-done
		var runErr *engine.RunError
		if !errors.As(err, &runErr) || !g.ConnectionLost(runErr.LastError) {
			t.Errorf("error %v, want a lost connection\n%s", err, out)
		}
		if err := server.Up(); err != nil {
			t.Fatal(err)
		}
	})
}
