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
