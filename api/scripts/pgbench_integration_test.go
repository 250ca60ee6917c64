package scripts_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/api/scripts"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
)

// These tests ask the real pgbench 15, against a real PostgreSQL, which scripts run a shell. They
// live here, beside the rule, and not in a package whose tests link a Kubernetes client: go test
// -fuzz instruments every package its binary links, and an instrumented client-go and envtest
// took the fuzz smoke five minutes on a fresh machine.

// shellSpellings are ways of writing a meta-command around a backslash, with whether the real
// pgbench 15 runs a shell for them (each was tried by hand first; the test asks pgbench again).
var shellSpellings = []struct {
	lead, sep, name string
	runs            bool
}{
	{lead: "select 1;\n", name: "shell", runs: true},
	{name: "SHELL", runs: true},
	{sep: " ", name: "shell", runs: true},
	{sep: "\t\f\v", name: "shell", runs: true},
	{sep: "\\\n", name: "shell", runs: true},
	{sep: "\\\r\n", name: "shell", runs: true},
	{sep: " \\\n \\\n  ", name: "shell", runs: true},
	{lead: "select 1 ", name: "shell", runs: true},
	{lead: "select 1;", name: "shell", runs: true},
	{name: "setshell v", runs: true},
	{name: "SetShell v", runs: true},
	{sep: "\n", name: "shell"},               // a newline ends the meta-command before its word
	{sep: "\\", name: "shell"},               // "\\shell" is the word "\shell": invalid command
	{sep: "\r\r", name: "shell", runs: true}, // carriage returns are spaces
	{name: "shellx"},                         // another word
	{lead: "-- ", name: "shell"},             // in a comment
	{lead: "select '", name: "sh"},           // in a string: "select '\sh touch …" never closes; pgbench refuses
}

// TestShellSpellingsAsPgbenchReadsThem asks the real pgbench whether each spelling runs a shell, and
// requires ShellMetaCommand (the runner's check and, by TestShellRuleIsThePattern, the CRD's) to
// refuse every one that does.
func TestShellSpellingsAsPgbenchReadsThem(t *testing.T) {
	pgtest.SkipIfShort(t)
	srv, err := pgtest.StartTemp(pgtest.Options{})
	if err != nil {
		t.Fatalf("cannot start PostgreSQL: %v", err)
	}
	t.Cleanup(srv.Stop)
	for _, s := range shellSpellings {
		script := s.lead + `\` + s.sep + s.name
		t.Run(strings.NewReplacer("\n", "⏎", "\r", "␍", "\t", "⇥").Replace(script), func(t *testing.T) {
			ran := pgbenchRunsShell(t, srv, script)
			if ran != s.runs {
				t.Errorf("pgbench ran a shell: %v, expected %v (pgbench changed how it reads meta-commands?)", ran, s.runs)
			}
			if ran && scripts.ShellMetaCommand(script+" touch x\n") == "" {
				t.Errorf("pgbench runs a shell for %q, and ShellMetaCommand lets it through", script)
			}
		})
	}
}

// FuzzShellSpellings: for any text around a backslash and before a command, whenever the real
// pgbench runs a shell, ShellMetaCommand refuses the script.
func FuzzShellSpellings(f *testing.F) {
	pgtest.SkipIfShort(f)
	for _, s := range shellSpellings {
		f.Add(s.lead, s.sep, s.name)
	}
	srv, err := pgtest.StartTemp(pgtest.Options{})
	if err != nil {
		f.Fatalf("cannot start PostgreSQL: %v", err)
	}
	f.Cleanup(srv.Stop)
	f.Fuzz(func(t *testing.T, lead, sep, name string) {
		// pgbench's \sleep (or SQL's pg_sleep) would make an input take the whole timeout, and the
		// fuzzer runs an input that finds new coverage many times while it minimizes it.
		all := strings.ToLower(lead + sep + name)
		if len(all) > 64 || strings.ContainsRune(all, 0) || strings.Contains(all, "sleep") {
			return
		}
		script := lead + `\` + sep + name
		if pgbenchRunsShell(t, srv, script) && scripts.ShellMetaCommand(script+" touch x\n") == "" {
			t.Fatalf("pgbench runs a shell for %q, and ShellMetaCommand lets it through", script)
		}
	})
}

// pgbenchRunsShell runs script followed by " touch MARKER" once with the real pgbench and reports
// whether the marker appeared: whether pgbench ran a shell command.
func pgbenchRunsShell(t *testing.T, srv *pgtest.Server, script string) bool {
	t.Helper()
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	file := filepath.Join(dir, "script.sql")
	if err := os.WriteFile(file, []byte(script+" touch "+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// One transaction of one client takes milliseconds; a script that waits is cut short.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "pgbench", "-n", "-t", "1", "-f", file)
	cmd.Env = os.Environ()
	for k, v := range srv.Env("disable") {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	_ = cmd.Run() // most spellings are errors: only the marker tells
	_, err := os.Stat(marker)
	return err == nil
}
