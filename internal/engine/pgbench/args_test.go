package pgbench

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

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
	if got := engine.SplitLoad(load, 1); !reflect.DeepEqual(got, []runspec.Load{load}) {
		t.Errorf("one tunnel: %+v", got)
	}
	var got []string
	for _, l := range engine.SplitLoad(load, 4) {
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
	for _, l := range engine.SplitLoad(load, 4) {
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
