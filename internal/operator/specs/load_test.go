package specs

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
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
				Rate: ptr.To(int32(200)), LatencyLimit: &metav1.Duration{Duration: 2500 * time.Microsecond}},
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
			if got := strings.Join(pgbench.LoadArgs(load), " "); got != tt.want {
				t.Errorf("LoadArgs = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRunForTellsTheEngine: a MySQL benchmark's runs name their engine, and its loads carry the
// scale, which sysbench is told rather than reads; a PostgreSQL load's do not.
func TestRunForTellsTheEngine(t *testing.T) {
	tests := []struct {
		name       string
		engine     benchv1.Engine
		init       bool
		wantEngine string
		wantScale  int
	}{
		{"postgresql's load", benchv1.EnginePostgreSQL, false, "", 0},
		{"postgresql's initialization", "", true, "", 3},
		{"mysql's load", benchv1.EngineMySQL, false, runspec.EngineMySQL, 3},
		{"mysql's initialization", benchv1.EngineMySQL, true, runspec.EngineMySQL, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &benchv1.TunnelBenchmark{Spec: benchv1.TunnelBenchmarkSpec{Server: benchv1.ServerSpec{Engine: tt.engine},
				Load: benchv1.LoadSpec{Builtin: "oltp_read_only", Scale: 3}}}
			r := RunFor(tb, tt.init, time.Minute)
			if r.Engine != tt.wantEngine || r.Scale != tt.wantScale {
				t.Errorf("engine %q scale %d, want %q and %d", r.Engine, r.Scale, tt.wantEngine, tt.wantScale)
			}
			if err := r.Validate(); err != nil && tt.engine == benchv1.EngineMySQL {
				t.Errorf("the runner would refuse the run: %v", err)
			}
		})
	}
}
