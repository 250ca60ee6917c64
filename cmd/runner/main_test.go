package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
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
			input:    readFile(t, "../../internal/pgbench/testdata/pg15-select-only-progress.txt"),
			wantCode: 0,
			wantKeys: []string{"tps", "tpsIncludingConnections", "latencyAvgMs", "latencyStddevMs", "connectionTimeMs",
				"transactions", "failedTransactions", "clients", "threads", "durationSeconds", "progress"},
		},
		{
			name:     "pgbench died",
			input:    readFile(t, "../../internal/pgbench/testdata/pg15-unreachable.txt"),
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
		{"no server", map[string]string{"PGUSER": "app", "PGPASSWORD": "pw"}, nil, "--server"},
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
			args := append([]string{"pgbouncer", "--dir=" + t.TempDir(), "--pgbouncer=/nonexistent"}, tt.args...)
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 2 {
				t.Fatalf("exit code %d, want 2 (stderr %q)", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantText) || strings.Contains(stderr.String(), "pw") {
				t.Errorf("stderr %q, want it to mention %q and not the password", stderr.String(), tt.wantText)
			}
		})
	}
}
