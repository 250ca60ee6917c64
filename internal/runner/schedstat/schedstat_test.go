package schedstat

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Task
		wantErr bool
	}{
		{in: "183053970 160773193 89\n", want: Task{OnCPU: 183053970, Waited: 160773193}},
		{in: "0 152930 1", want: Task{Waited: 152930}},
		{in: "12 34", want: Task{OnCPU: 12, Waited: 34}},
		{in: "12", wantErr: true},
		{in: "", wantErr: true},
		{in: "-1 2 3", wantErr: true},
		{in: "1 x 3", wantErr: true},
		{in: "99999999999999999999 1 1", wantErr: true},
	} {
		got, err := Parse([]byte(tc.in))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestSub(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name       string
		start, end Tasks
		want       Window
	}{
		{name: "one thread", start: Tasks{1: {OnCPU: 10 * ms, Waited: 1 * ms}}, end: Tasks{1: {OnCPU: 50 * ms, Waited: 3 * ms}},
			want: Window{OnCPU: 40 * ms, Waited: 2 * ms, Threads: 1, Busiest: 40 * ms}},
		{name: "the busiest of two", start: Tasks{1: {}, 2: {OnCPU: 5 * ms}}, end: Tasks{1: {OnCPU: 7 * ms}, 2: {OnCPU: 25 * ms, Waited: ms}},
			want: Window{OnCPU: 27 * ms, Waited: ms, Threads: 2, Busiest: 20 * ms}},
		{name: "started within counts whole", start: Tasks{1: {OnCPU: ms}}, end: Tasks{1: {OnCPU: 2 * ms}, 9: {OnCPU: 4 * ms, Waited: ms}},
			want: Window{OnCPU: 5 * ms, Waited: ms, Threads: 2, Started: 1, Busiest: 4 * ms}},
		{name: "ended within is lost", start: Tasks{1: {OnCPU: ms}, 2: {OnCPU: ms}}, end: Tasks{1: {OnCPU: 3 * ms}},
			want: Window{OnCPU: 2 * ms, Threads: 1, Lost: 1, Busiest: 2 * ms}},
		{name: "a reused ID is a new thread", start: Tasks{1: {OnCPU: 9 * ms}}, end: Tasks{1: {OnCPU: 2 * ms}},
			want: Window{OnCPU: 2 * ms, Threads: 1, Started: 1, Busiest: 2 * ms}},
		{name: "nothing", want: Window{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.end.Sub(tc.start); got != tc.want {
				t.Errorf("Sub = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// write creates path's parents and the file.
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadAndThreads(t *testing.T) {
	proc := t.TempDir()
	// Pod a's process 10 has threads 10 and 11 (a cgroup v1 line); pod b's process 20 one (v2).
	write(t, filepath.Join(proc, "10", "cgroup"), "4:cpu,cpuacct:/kubepods/burstable/poda/c1\n1:name=systemd:/x\n")
	write(t, filepath.Join(proc, "10", "task", "10", "schedstat"), "100 10 1\n")
	write(t, filepath.Join(proc, "10", "task", "11", "schedstat"), "200 20 1\n")
	write(t, filepath.Join(proc, "20", "cgroup"), "0::/kubepods/podb/c2\n")
	write(t, filepath.Join(proc, "20", "task", "20", "schedstat"), "300 30 1\n")
	write(t, filepath.Join(proc, "self", "cgroup"), "0::/\n")
	// /proc/<tid> is where Read finds a thread, as the kernel serves it.
	for _, tid := range []string{"10", "11", "20"} {
		dir := "10"
		if tid == "20" {
			dir = "20"
		}
		b, _ := os.ReadFile(filepath.Join(proc, dir, "task", tid, "schedstat"))
		write(t, filepath.Join(proc, tid, "schedstat"), string(b))
	}
	ids, err := PodThreads(proc, func(p string) bool { return filepath.Base(filepath.Dir(p)) == "poda" })
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int{10, 11}) {
		t.Fatalf("PodThreads = %v, want [10 11]", ids)
	}
	got := Read(proc, append(ids, 99))
	if want := (Tasks{10: {OnCPU: 100, Waited: 10}, 11: {OnCPU: 200, Waited: 20}}); !maps.Equal(got, want) {
		t.Errorf("Read = %v, want %v (99 does not exist)", got, want)
	}

	cg := t.TempDir()
	write(t, filepath.Join(cg, "tasks"), "1\n")
	write(t, filepath.Join(cg, "c1", "tasks"), "10\n11\n")
	write(t, filepath.Join(cg, "c2", "cgroup.threads"), "20\n")
	ids, err = CgroupThreads(cg)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int{1, 10, 11, 20}) {
		t.Errorf("CgroupThreads = %v, want [1 10 11 20]", ids)
	}
}

// TestAlwaysRunnable checks the instrument against what it must show: a thread that never sleeps
// is always on a CPU or waiting for one, so over a window the two add up to the window's length,
// however busy the machine.
func TestAlwaysRunnable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a second of busy loop")
	}
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	tid := []int{cmd.Process.Pid}
	start, began := Read("/proc", tid), time.Now()
	time.Sleep(time.Second)
	end, wall := Read("/proc", tid), time.Since(began)
	if len(start) != 1 || len(end) != 1 {
		t.Fatalf("the loop's schedstat was not read: %v %v", start, end)
	}
	w := end.Sub(start)
	sum := w.OnCPU + w.Waited
	t.Logf("over %v: %v on a CPU, %v waiting for one", wall, w.OnCPU, w.Waited)
	if ratio := float64(sum) / float64(wall); ratio < 0.95 || ratio > 1.05 {
		t.Errorf("on a CPU + waiting = %v over a window of %v (%.3f): a runnable thread's time is not all accounted for",
			sum, wall, ratio)
	}
	if w.Busiest != w.OnCPU || w.Threads != 1 {
		t.Errorf("one thread: busiest %v, threads %d", w.Busiest, w.Threads)
	}
}
