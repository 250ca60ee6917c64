package pgbench

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
)

// TestLoadArgs follows a load from the API to pgbench's command line: the API's defaults, then
// the argv the runner builds from the typed load.
func TestLoadArgs(t *testing.T) {
	tx := int32(500)
	tests := []struct {
		name     string
		load     benchv1.LoadSpec
		wantLoad runspec.Load
		want     string
	}{
		{
			name: "defaults",
			load: benchv1.LoadSpec{Builtin: "select-only"},
			wantLoad: runspec.Load{Builtin: "select-only", Protocol: "simple", Clients: 1, Threads: 1,
				Duration: benchv1.DefaultDuration, ProgressInterval: 5 * time.Second, StallTimeout: 30 * time.Second},
			want: "-b select-only -M simple -c 1 -j 1 -T 60 -P 5 --failures-detailed",
		},
		{
			name: "published tunnel study: prepared, 16 clients, 4 threads, 60s",
			load: benchv1.LoadSpec{Builtin: "tpcb-like", Protocol: "prepared", Clients: 16, Threads: 4,
				Duration: &metav1.Duration{Duration: time.Minute}},
			wantLoad: runspec.Load{Builtin: "tpcb-like", Protocol: "prepared", Clients: 16, Threads: 4,
				Duration: time.Minute, ProgressInterval: 5 * time.Second, StallTimeout: 30 * time.Second},
			want: "-b tpcb-like -M prepared -c 16 -j 4 -T 60 -P 5 --failures-detailed",
		},
		{
			name: "inline script, transactions, reconnect, sub-second progress rounds up",
			load: benchv1.LoadSpec{Script: "select 1;", Protocol: "extended", Clients: 8, Threads: 2,
				Transactions: &tx, Reconnect: true, ProgressInterval: &metav1.Duration{Duration: 1500 * time.Millisecond},
				StallTimeout: &metav1.Duration{Duration: 2 * time.Minute}},
			wantLoad: runspec.Load{Script: true, Protocol: "extended", Clients: 8, Threads: 2, Transactions: 500,
				Reconnect: true, ProgressInterval: 1500 * time.Millisecond, StallTimeout: 2 * time.Minute},
			want: "-n -f /tmp/tunnelbench/script.sql -M extended -c 8 -j 2 -t 500 -C -P 2 --failures-detailed",
		},
		{
			name: "open loop: a rate and a sub-millisecond latency limit",
			load: benchv1.LoadSpec{Builtin: "select-only", Clients: 4, Threads: 2, Duration: &metav1.Duration{Duration: time.Minute},
				Rate: ptr(int32(200)), LatencyLimit: &metav1.Duration{Duration: 2500 * time.Microsecond}},
			wantLoad: runspec.Load{Builtin: "select-only", Protocol: "simple", Clients: 4, Threads: 2, Duration: time.Minute,
				ProgressInterval: 5 * time.Second, StallTimeout: 30 * time.Second, Rate: 200, LatencyLimit: 2500 * time.Microsecond},
			want: "-b select-only -M simple -c 4 -j 2 -T 60 -R 200 -L 2.5 -P 5 --failures-detailed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			load := LoadFor(tt.load)
			if load != tt.wantLoad {
				t.Errorf("LoadFor = %+v\n      want %+v", load, tt.wantLoad)
			}
			if got := strings.Join(LoadArgs(load), " "); got != tt.want {
				t.Errorf("LoadArgs = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLoadArgsLeavesZeroToPgbench: a field the load does not set is no flag at all.
func TestLoadArgsLeavesZeroToPgbench(t *testing.T) {
	got := strings.Join(LoadArgs(runspec.Load{Builtin: "select-only", Duration: 1500 * time.Millisecond}), " ")
	if got != "-b select-only -T 2 --failures-detailed" {
		t.Errorf("LoadArgs = %q", got)
	}
}

func TestSplitLoad(t *testing.T) {
	load := runspec.Load{Builtin: "select-only", Protocol: "prepared", Clients: 10, Threads: 4, Duration: time.Minute,
		ProgressInterval: time.Second}
	if got := SplitLoad(load, 1); !reflect.DeepEqual(got, []runspec.Load{load}) {
		t.Errorf("one tunnel: %+v", got)
	}
	var got []string
	for _, l := range SplitLoad(load, 4) {
		got = append(got, strings.Join(LoadArgs(l), " "))
	}
	want := []string{
		"-b select-only -M prepared -c 3 -j 1 -T 60 -P 1 --failures-detailed",
		"-b select-only -M prepared -c 3 -j 1 -T 60 -P 1 --failures-detailed",
		"-b select-only -M prepared -c 2 -j 1 -T 60 -P 1 --failures-detailed",
		"-b select-only -M prepared -c 2 -j 1 -T 60 -P 1 --failures-detailed",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("split across 4 tunnels:\n got %q\nwant %q", got, want)
	}
	if load.Clients != 10 || load.Threads != 4 {
		t.Errorf("the split changed the whole run's load: %+v", load)
	}
	// The rate follows the clients: 3, 3, 2 and 2 of 10 at 100 tps.
	load.Rate = 100
	var rates []float64
	for _, l := range SplitLoad(load, 4) {
		rates = append(rates, l.Rate)
	}
	if !reflect.DeepEqual(rates, []float64{30, 30, 20, 20}) {
		t.Errorf("rates split %v", rates)
	}
}

func TestInitArgs(t *testing.T) {
	if got := strings.Join(InitArgs(10), " "); got != "-i -s 10" {
		t.Errorf("InitArgs = %q", got)
	}
	if got := strings.Join(InitArgs(0), " "); got != "-i" {
		t.Errorf("InitArgs without a scale = %q", got)
	}
}

func TestCommandLine(t *testing.T) {
	got := CommandLine("pgbench", []string{"-f", "/tmp/a b.sql", "-c", "4", "it's"})
	want := `pgbench -f '/tmp/a b.sql' -c 4 'it'\''s'`
	if got != want {
		t.Errorf("CommandLine = %s, want %s", got, want)
	}
}
