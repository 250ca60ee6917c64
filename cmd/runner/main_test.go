package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantCode int
		wantKeys []string
		wantErr  string
	}{
		{
			name:     "summary",
			input:    readFile(t, "../../internal/engine/pgbench/testdata/pg15-select-only-progress.txt"),
			wantCode: 0,
			wantKeys: []string{"tps", "tpsIncludingConnections", "latencyAvgMs", "latencyStddevMs", "connectionTimeMs",
				"transactions", "failedTransactions", "clients", "threads", "durationSeconds", "progress"},
		},
		{
			name:     "pgbench died",
			input:    readFile(t, "../../internal/engine/pgbench/testdata/pg15-unreachable.txt"),
			wantCode: 1,
			wantErr:  "Connection refused",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"parse"}, strings.NewReader(tt.input), &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			if tt.wantErr != "" && !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.wantErr)
			}
			if len(tt.wantKeys) == 0 {
				return
			}
			var got map[string]any
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("output is not JSON: %v", err)
			}
			for _, k := range tt.wantKeys {
				if _, ok := got[k]; !ok {
					t.Errorf("key %q missing from %s", k, stdout.String())
				}
			}
			if got["tpsIncludingConnections"] != nil {
				t.Errorf("tpsIncludingConnections = %v, want null without -C", got["tpsIncludingConnections"])
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPgBouncerCommandRefusesBadSettings: the errors come before PgBouncer replaces the process
// (the exec itself is exercised by the end-to-end tests, where it is the pooler's container).
func TestPgBouncerCommandRefusesBadSettings(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantText string
	}{
		{"no credentials", map[string]string{"PGUSER": "", "PGPASSWORD": ""}, []string{"--server=db:5432"}, "PGUSER and PGPASSWORD"},
		{"no server", map[string]string{"PGUSER": "app", "PGPASSWORD": "pw"}, []string{"--server="}, "--server"},
		{"statement pooling", map[string]string{"PGUSER": "app", "PGPASSWORD": "pw"},
			[]string{"--server=db:5432", "--pool-mode=statement"}, "pool mode"},
		{"verify-full without a CA", map[string]string{"PGUSER": "app", "PGPASSWORD": "pw"},
			[]string{"--server=db:5432", "--server-tls=verify-full"}, "CA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			// Every other setting valid, as the operator renders them: the flags have no defaults.
			valid := []string{"--listen=127.0.0.1:6432", "--server=db:5432", "--client-auth=trust", "--pool-mode=session",
				"--pool-size=5", "--max-client-conn=10", "--server-tls=disable"}
			args := append(append([]string{"pgbouncer", "--dir=" + t.TempDir(), "--pgbouncer=/nonexistent"}, valid...), tt.args...)
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 2 {
				t.Fatalf("exit code %d, want 2 (stderr %q)", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantText) || strings.Contains(stderr.String(), "pw") {
				t.Errorf("stderr %q, want it to mention %q and not the password", stderr.String(), tt.wantText)
			}
		})
	}
}

// TestRunCommandTakesTheOperatorsFlags: what the operator renders (runspec.Run.Args, as in the
// Job) is accepted and becomes the pgbench command of the report. No server listens, so the run
// fails at the wait, before pgbench.
func TestRunCommandTakesTheOperatorsFlags(t *testing.T) {
	for k, v := range map[string]string{"PGHOST": "127.0.0.1", "PGPORT": "1", "PGUSER": "app", "PGPASSWORD": "pw",
		"PGDATABASE": "app", "PGSSLMODE": "disable"} {
		t.Setenv(k, v)
	}
	spec := runspec.Run{WaitTimeout: time.Millisecond, Tunnels: 1, Load: runspec.Load{Builtin: "select-only",
		Protocol: "prepared", Clients: 4, Threads: 2, Duration: 10 * time.Second, ProgressInterval: 5 * time.Second}}
	termLog := filepath.Join(t.TempDir(), "termination-log")
	args := append([]string{"run", "--termination-log=" + termLog, "--pgbench=/nonexistent"}, spec.Args()...)
	var stdout, stderr bytes.Buffer
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Fatalf("exit code %d, want 1 (stderr %q)", code, stderr.String())
	}
	rep, err := report.Decode(readFile(t, termLog))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failure == nil || rep.Failure.Reason != conditions.ReasonServerUnreachable ||
		rep.Command != "pgbench -b select-only -M prepared -c 4 -j 2 -T 10 -P 5 --failures-detailed" {
		t.Errorf("report %+v (failure %+v)", rep, rep.Failure)
	}
}

// TestRunCommandRefusesBadSettings: a run the runner cannot carry out as asked fails with exit code
// 2 and the reason, before waiting for any server.
func TestRunCommandRefusesBadSettings(t *testing.T) {
	valid := []string{"--builtin=select-only", "--duration=10s", "--tunnels=1"}
	tests := []struct {
		name     string
		args     []string
		wantText string
	}{
		{"unknown pooler", []string{"--pooler=pgpool"}, "--pooler must be"},
		{"storm out of range", []string{"--storm=2000000"}, "--storm"},
		{"duration and transactions", []string{"--transactions=5"}, "mutually exclusive"},
		{"pgbench's own argv", []string{"--", "-c", "4"}, "unexpected arguments"},
		{"unknown flag", []string{"--clients-per-tunnel=2"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"run", "--termination-log="}, valid...), tt.args...)
			var stdout, stderr bytes.Buffer
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 2 {
				t.Fatalf("exit code %d, want 2 (stderr %q)", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantText) {
				t.Errorf("stderr %q does not mention %q", stderr.String(), tt.wantText)
			}
		})
	}
}
