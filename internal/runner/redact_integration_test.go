package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/runner/redact"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
)

// TestSecretsNeverLeaveTheRunner: scripts that make the real server and pgbench print the password
// (a server that stores it, selected and cast, raised as an error, raised as a notice) leave it in
// none of what the runner writes: the report it stores, its termination message, its output.
// Each script does print it: the mask is found where the password would be.
func TestSecretsNeverLeaveTheRunner(t *testing.T) {
	pgtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.ConnString("disable"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "create table leak (v text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "insert into leak values ($1)", s.Password); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)

	scripts := map[string]string{
		"a cast of a query result":  "select v::int from leak;",
		"an error message":          "do $$ begin raise exception 'leak-%', (select v from leak); end $$;",
		"a notice, then an error":   "do $$ begin raise notice 'leak-%', (select v from leak); end $$;\nselect 1/0;",
		"a notice in a passing run": "do $$ begin raise notice 'leak-%', (select v from leak); end $$;",
	}
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			setEnv(t, s.Env("disable"))
			setEnv(t, map[string]string{runspec.ScriptEnv: script})
			var stored []byte
			opts := Options{
				Run:            runspec.Run{Load: runspec.Load{Script: true, Clients: 1, Threads: 1, Transactions: 1}, Tunnels: 1},
				Redactor:       Secrets(),
				Store:          func(_ context.Context, b []byte) error { stored = b; return nil },
				TerminationLog: filepath.Join(t.TempDir(), "termination-log"),
			}
			if opts.Redactor.Empty() {
				t.Fatal("the runner found no secret in its environment")
			}
			rep, out, _ := runOnce(t, opts)
			termination, _ := os.ReadFile(opts.TerminationLog)
			texts := map[string]string{"stored report": string(stored), "termination message": string(termination), "output": out}
			if rep.Failure != nil {
				texts["failure"] = rep.Failure.Message
			}
			masked := false
			for what, text := range texts {
				if strings.Contains(text, s.Password) {
					t.Errorf("the password is in the runner's %s: %q", what, text)
				}
				masked = masked || strings.Contains(text, "leak-"+redact.Mask) || strings.Contains(text, `"`+redact.Mask+`"`)
			}
			if !masked {
				t.Errorf("no text shows the mask where the password was printed: did the script print it? %v", texts)
			}
		})
	}
}
