package pgbench

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func TestRunArgs(t *testing.T) {
	tx := int32(500)
	tests := []struct {
		name string
		load benchv1.LoadSpec
		want string
	}{
		{
			name: "defaults",
			load: benchv1.LoadSpec{Builtin: "select-only"},
			want: "-b select-only -M simple -c 1 -j 1 -T 60 -P 5",
		},
		{
			name: "published tunnel study: prepared, 16 clients, 4 threads, 60s",
			load: benchv1.LoadSpec{Builtin: "tpcb-like", Protocol: "prepared", Clients: 16, Threads: 4,
				Duration: &metav1.Duration{Duration: time.Minute}},
			want: "-b tpcb-like -M prepared -c 16 -j 4 -T 60 -P 5",
		},
		{
			name: "inline script, transactions, reconnect, sub-second progress rounds up",
			load: benchv1.LoadSpec{Script: "select 1;", Protocol: "extended", Clients: 8, Threads: 2,
				Transactions: &tx, Reconnect: true, ProgressInterval: &metav1.Duration{Duration: 1500 * time.Millisecond}},
			want: "-n -f /tmp/tunnelbench/script.sql -M extended -c 8 -j 2 -t 500 -C -P 2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(RunArgs(tt.load), " "); got != tt.want {
				t.Errorf("RunArgs = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInitArgs(t *testing.T) {
	if got := strings.Join(InitArgs(benchv1.LoadSpec{Scale: 10}), " "); got != "-i -s 10" {
		t.Errorf("InitArgs = %q", got)
	}
}

func TestCommandLine(t *testing.T) {
	got := CommandLine("pgbench", []string{"-f", "/tmp/a b.sql", "-c", "4", "it's"})
	want := `pgbench -f '/tmp/a b.sql' -c 4 'it'\''s'`
	if got != want {
		t.Errorf("CommandLine = %s, want %s", got, want)
	}
}
