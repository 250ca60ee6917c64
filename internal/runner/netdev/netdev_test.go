package netdev

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRead: the kernel's format, loopback left out, and what is not that format.
func TestRead(t *testing.T) {
	const header = "Inter-|   Receive                                                |  Transmit\n" +
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
	tests := []struct {
		name    string
		content string
		want    Counters
		fails   bool
	}{
		{"a pod: lo and eth0", header +
			"    lo: 9000 90 0 0 0 0 0 0 9000 90 0 0 0 0 0 0\n" +
			"  eth0: 123456 789 0 0 0 0 0 0 654321 987 0 0 0 0 0 0\n",
			Counters{ReceivedBytes: 123456, ReceivedPackets: 789, SentBytes: 654321, SentPackets: 987}, false},
		{"two interfaces add up", header +
			"  eth0: 100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0\n" +
			"  net1:50 1 0 0 0 0 0 0 70 1 0 0 0 0 0 0\n",
			Counters{ReceivedBytes: 150, ReceivedPackets: 2, SentBytes: 270, SentPackets: 3}, false},
		{"loopback only", header + "    lo: 9000 90 0 0 0 0 0 0 9000 90 0 0 0 0 0 0\n", Counters{}, false},
		{"a short line", header + "  eth0: 100 1 0\n", Counters{}, true},
		{"not a number", header + "  eth0: many 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0\n", Counters{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dev")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := Read(path)
			if (err != nil) != tt.fails || got != tt.want {
				t.Errorf("Read = %+v, %v; want %+v (error: %v)", got, err, tt.want, tt.fails)
			}
		})
	}
}

// TestReadThisMachine reads the kernel's own file: its format is the one parsed above.
func TestReadThisMachine(t *testing.T) {
	if _, err := os.Stat(Path); err != nil {
		t.Skipf("no %s here: %v", Path, err)
	}
	if _, err := Read(Path); err != nil {
		t.Error(err)
	}
}
