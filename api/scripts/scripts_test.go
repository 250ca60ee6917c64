package scripts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShellMetaCommand(t *testing.T) {
	tests := []struct {
		script string
		want   string
	}{
		{"select 1;", ""},
		{"\\set aid random(1, 100000)\nselect abalance from pgbench_accounts where aid = :aid;", ""},
		{"-- a shell of a query\nselect 'shell';", ""},
		{"\\shell env\nselect 1;", `\shell`},
		{"\\SetShell out cat /proc/self/environ\nselect 1;", `\SetShell`},
		{"\\shell echo $PGPASSWORD", `\shell`},
		{"\\SHELL echo", `\SHELL`},
		{"select 1;\n\\ shell echo", `\ shell`},
		{"\\\t\f\v\rshell echo", "\\\t\f\v\rshell"},
		{"\\\\\nshell echo", "\\\\\nshell"},
		{"\\ \\\r\n \\\n  SetShell v echo", "\\ \\\r\n \\\n  SetShell"},
		{"select 1 \\setshell v echo", `\setshell`},
		// A newline ends the meta-command before any word: pgbench runs no shell.
		{"\\\nshell", ""},
		// Erring on the safe side: inside a string pgbench would not run it, but it is refused.
		{"select '\\shell';", `\shell`},
	}
	for _, tt := range tests {
		if got := ShellMetaCommand(tt.script); got != tt.want {
			t.Errorf("ShellMetaCommand(%q) = %q, want %q", tt.script, got, tt.want)
		}
	}
}

// TestShellRuleIsThePattern: the CRD's CEL rule on spec.load.script is ShellMetaCommandPattern, so
// that what `kubectl apply` refuses and what the runner refuses are one rule.
func TestShellRuleIsThePattern(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "bench.tunnelbench.io_tunnelbenchmarks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The rule is a YAML single-quoted string (quotes doubled) holding a CEL raw string.
	want := "!self.matches(r''" + ShellMetaCommandPattern + "'')"
	if !strings.Contains(string(crd), want) {
		t.Errorf("the CRD has no rule %s: regenerate it (make manifests), or align the marker with ShellMetaCommandPattern", want)
	}
}
