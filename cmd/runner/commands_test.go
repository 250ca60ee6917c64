package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandsDispatch: every subcommand the operator's pods and the chart start is registered by
// its own file, an unknown one is refused naming those that exist, and no command prints usage.
func TestCommandsDispatch(t *testing.T) {
	for _, name := range []string{"run", "parse", "probe", "pgbouncer", "mysqlpool", "link", "sidecar", "node-reader", "with-file",
		"wg-gateway", "wg-client", "ovpn-gateway", "ovpn-client"} {
		if _, ok := commands[name]; !ok {
			t.Errorf("%s is not registered: the pods that start it would fail", name)
		}
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "usage: tunnelbench-runner "},
		{"an unknown command", []string{"shell"}, `unknown command "shell": use one of link, mysqlpool, node-reader, ovpn-client`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(tt.args, nil, &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q, want 2 and %q", code, stderr.String(), tt.want)
			}
		})
	}
}
