package runner

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
)

// TestExplainNamesTheTunnelThatRestarted: a tunnel whose ssh logged two sessions was restarted under
// pgbench (its sidecar killed): the lost connections are its doing, not the server's.
func TestExplainNamesTheTunnelThatRestarted(t *testing.T) {
	session := "OpenSSH_9.2p1\ndebug1: Local version string SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\n" +
		"debug1: Local connections to LOCALHOST:15433 forwarded to remote address pg-rw:5432\n"
	dir := t.TempDir()
	for i, log := range []string{session, session + session} {
		if err := os.WriteFile(runspec.TunnelLogFile(dir, i), []byte(log), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	lost := errors.New("pgbench run was aborted: client 1 aborted in command 1 (SQL) of script 0; perhaps the backend died while processing")
	f := tunnelLogs{generator: pgbench.Generator{}, dir: dir, count: 2}.explain(0, 2, lost)
	if f.Reason != conditions.ReasonTunnelDown || !strings.Contains(f.Message, "tunnel 1 of 2: its ssh was started 2 times") ||
		!strings.Contains(f.Message, "perhaps the backend died") {
		t.Errorf("failure %s: %s", f.Reason, f.Message)
	}
	f = tunnelLogs{generator: pgbench.Generator{}, dir: dir, count: 1}.explain(0, 1, lost)
	if f.Reason != conditions.ReasonConnectionLost {
		t.Errorf("one healthy tunnel: %s: %s, want ConnectionLost", f.Reason, f.Message)
	}

	// Killed and not yet restarted: its loopback port refuses connections.
	closed, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	f = tunnelLogs{generator: pgbench.Generator{}, dir: dir, count: 1, port: closed}.explain(0, 1, lost)
	want := fmt.Sprintf("tunnel 0 of 1: its ssh is gone (127.0.0.1:%d refuses", closed)
	if f.Reason != conditions.ReasonTunnelDown || !strings.Contains(f.Message, want) {
		t.Errorf("a closed tunnel port: %s: %s", f.Reason, f.Message)
	}
	// Listening: the tunnel is up, the loss is the server's (or beyond the tunnel).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	f = tunnelLogs{generator: pgbench.Generator{}, dir: dir, count: 1, port: l.Addr().(*net.TCPAddr).Port}.explain(0, 1, lost)
	if f.Reason != conditions.ReasonConnectionLost {
		t.Errorf("a listening tunnel port: %s: %s, want ConnectionLost", f.Reason, f.Message)
	}
}

func TestStormSizes(t *testing.T) {
	tests := []struct {
		n    int32
		want []int32
	}{
		{300, []int32{50, 50, 50, 50, 50, 50}},
		{10, []int32{2, 2, 2, 2, 1, 1}},
		{4, []int32{1, 1, 1, 1}},
		{10000, []int32{1667, 1667, 1667, 1667, 1666, 1666}},
	}
	for _, tt := range tests {
		got := stormSizes(tt.n)
		sum := int32(0)
		for _, s := range got {
			sum += s
		}
		if !slices.Equal(got, tt.want) || sum != tt.n {
			t.Errorf("stormSizes(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}
