package cgroupcpu

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestReadOwnCgroup reads this process's own cgroup, as the kernel keeps it, around 300 ms of CPU
// work: the usage grows by at least that much (the cgroup may hold other processes too: only the
// lower bound is this test's), and user and system time add up to the usage.
func TestReadOwnCgroup(t *testing.T) {
	root, err := Self(t.TempDir())
	if err != nil {
		t.Skipf("no cgroup to read here: %v", err)
	}
	before, err := Read(root)
	if err != nil {
		t.Fatal(err)
	}
	burn(300 * time.Millisecond)
	after, err := Read(root)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	if d.Usage < 250*time.Millisecond {
		t.Errorf("%v of CPU over 300 ms of work (cgroup v%d at %s)", d.Usage, d.Version, root)
	}
	if len(after.Tasks) != 0 {
		t.Errorf("Read read %d threads: the window's ends need the counters alone", len(after.Tasks))
	}
	if threads, err := ReadThreads(root); err != nil || len(threads.Tasks) == 0 {
		t.Errorf("ReadThreads read no thread of the cgroup at %s (%v)", root, err)
	}
	if total := after.User + after.System; float64(total) < 0.9*float64(after.Usage) || float64(total) > 1.1*float64(after.Usage) {
		t.Errorf("user %v + system %v against usage %v", after.User, after.System, after.Usage)
	}
}

// TestReadUnifiedMount reads a real cgroup v2 cpu.stat where the machine mounts one (a hybrid
// host's /sys/fs/cgroup/unified, or a v2 host's root).
func TestReadUnifiedMount(t *testing.T) {
	for _, dir := range []string{Root, filepath.Join(Root, "unified")} {
		if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err != nil {
			continue
		}
		s, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if s.Version != 2 || s.Usage <= 0 || s.User+s.System > s.Usage+time.Second {
			t.Errorf("%s: %+v", dir, s)
		}
		return
	}
	t.Skip("no cgroup v2 mount on this machine")
}

// TestReadFormats: the files as each kernel writes them, and what is not one.
func TestReadFormats(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  Sample
		fails bool
	}{
		{"v2 with a CPU limit", map[string]string{"cgroup.controllers": "cpu memory\n",
			"cpu.stat": "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n" +
				"nr_periods 100\nnr_throttled 7\nthrottled_usec 35000\nnr_bursts 0\nburst_usec 0\n"},
			Sample{Version: 2, Usage: 1500 * time.Millisecond, User: time.Second, System: 500 * time.Millisecond,
				Periods: 100, Throttled: 7, ThrottledTime: 35 * time.Millisecond}, false},
		{"v2 without the cpu controller", map[string]string{"cgroup.controllers": "",
			"cpu.stat": "usage_usec 20\nuser_usec 15\nsystem_usec 5\n"},
			Sample{Version: 2, Usage: 20 * time.Microsecond, User: 15 * time.Microsecond, System: 5 * time.Microsecond}, false},
		{"v1, controllers apart", map[string]string{"cpuacct/cpuacct.usage": "2000000000\n",
			"cpuacct/cpuacct.usage_user": "1500000000\n", "cpuacct/cpuacct.usage_sys": "500000000\n",
			"cpu/cpu.stat": "nr_periods 10\nnr_throttled 2\nthrottled_time 4000000\n"},
			Sample{Version: 1, Usage: 2 * time.Second, User: 1500 * time.Millisecond, System: 500 * time.Millisecond,
				Periods: 10, Throttled: 2, ThrottledTime: 4 * time.Millisecond}, false},
		{"v1, controllers together, an old kernel's ticks", map[string]string{"cpu,cpuacct/cpuacct.usage": "1000\n",
			"cpu,cpuacct/cpuacct.stat": "user 30\nsystem 12\n", "cpu,cpuacct/cpu.stat": "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"},
			Sample{Version: 1, Usage: time.Microsecond, User: 300 * time.Millisecond, System: 120 * time.Millisecond}, false},
		{"v2 without usage", map[string]string{"cgroup.controllers": "", "cpu.stat": "nr_periods 1\n"}, Sample{}, true},
		{"a garbled number", map[string]string{"cpuacct/cpuacct.usage": "lots\n"}, Sample{}, true},
		{"no cgroup at all", map[string]string{"other": ""}, Sample{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				path := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Read(dir)
			if (err != nil) != tt.fails || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Read = %+v, %v; want %+v (error: %v)", got, err, tt.want, tt.fails)
			}
		})
	}
}

// TestSub: a window's figures are the difference of its ends.
func TestSub(t *testing.T) {
	a := Sample{Usage: time.Second, User: 600 * time.Millisecond, System: 400 * time.Millisecond, Periods: 10, Throttled: 1,
		ThrottledTime: time.Millisecond, Version: 2}
	b := Sample{Usage: 3 * time.Second, User: 2 * time.Second, System: time.Second, Periods: 30, Throttled: 6,
		ThrottledTime: 9 * time.Millisecond, Version: 2}
	want := Sample{Usage: 2 * time.Second, User: 1400 * time.Millisecond, System: 600 * time.Millisecond, Periods: 20,
		Throttled: 5, ThrottledTime: 8 * time.Millisecond, Version: 2}
	if got := b.Sub(a); !reflect.DeepEqual(got, want) {
		t.Errorf("Sub = %+v, want %+v", got, want)
	}
}

func burn(d time.Duration) {
	x := 0
	for start := time.Now(); time.Since(start) < d; {
		for i := 0; i < 1000; i++ {
			x += i * i
		}
	}
	_ = x
}
