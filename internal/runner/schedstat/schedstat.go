// Package schedstat reads how long each thread of a group ran on a CPU and how long it waited on a
// run queue for one, from the scheduler's own per-thread accounting (/proc/<tid>/schedstat: the
// nanoseconds on a CPU, the nanoseconds runnable but waiting, the timeslices). It answers what a
// cgroup's CPU total cannot: whether a part's time went to a CPU, to waiting for one, or to neither
// (the part was idle, waiting on the network or on another part), and whether one thread of a
// single-threaded part (ssh, sshd, PgBouncer) was at a full core while the part's share of the node
// looked small.
//
// The file is world-readable and needs no privilege: a container reads its own threads through its
// own /proc; the node reader reads a pod's through the host's /proc, mounted read-only.
package schedstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Task is one thread's cumulative accounting.
type Task struct {
	// OnCPU is the time it ran; Waited the time it was runnable and waited for a CPU.
	OnCPU  time.Duration `json:"c"`
	Waited time.Duration `json:"w"`
}

// Tasks are a group's threads by thread ID, each as sampled at one moment.
type Tasks map[int]Task

// MaxTasks bounds a sample: a part of a path has a handful of threads (PostgreSQL one process per
// connection, up to a few hundred); beyond it the rest are left out, and the sample says so.
const MaxTasks = 1024

// Parse reads one schedstat line: "run_ns wait_ns timeslices".
func Parse(b []byte) (Task, error) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return Task{}, fmt.Errorf("schedstat %q: want at least 2 fields", strings.TrimSpace(string(b)))
	}
	run, err := strconv.ParseUint(f[0], 10, 63)
	if err != nil {
		return Task{}, fmt.Errorf("schedstat %q: %w", strings.TrimSpace(string(b)), err)
	}
	wait, err := strconv.ParseUint(f[1], 10, 63)
	if err != nil {
		return Task{}, fmt.Errorf("schedstat %q: %w", strings.TrimSpace(string(b)), err)
	}
	return Task{OnCPU: time.Duration(run), Waited: time.Duration(wait)}, nil
}

// Read samples the threads tids through the /proc mounted at proc; a thread that ended meanwhile
// is left out (its time is then missing from the group's, which Window says as Lost); nil when
// none was read.
func Read(proc string, tids []int) Tasks {
	out := make(Tasks, min(len(tids), MaxTasks))
	for _, tid := range tids {
		if len(out) == MaxTasks {
			break
		}
		b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(tid), "schedstat"))
		if err != nil {
			continue
		}
		if t, err := Parse(b); err == nil {
			out[tid] = t
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// CgroupThreads are the thread IDs of the cgroup at dir and of every cgroup below it, as the reader
// sees them (a process sees the IDs of its own PID namespace): cgroup v1's tasks, v2's
// cgroup.threads.
func CgroupThreads(dir string) ([]int, error) {
	// A container's view may reach its cgroup through a link; the walk starts where it points.
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	var out []int
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		for _, name := range []string{"tasks", "cgroup.threads"} {
			ids, err := idList(filepath.Join(path, name))
			if err == nil {
				out = append(out, ids...)
				break
			}
		}
		return nil
	})
	return out, err
}

// PodThreads are the thread IDs, in the PID namespace of the /proc mounted at proc, of every
// process whose cgroup path (any controller's) passes within: the node reader's way to a pod's
// threads, since a cgroup's own lists show a reader in another PID namespace none of them.
func PodThreads(proc string, within func(cgroupPath string) bool) ([]int, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		if !inCgroup(filepath.Join(proc, e.Name(), "cgroup"), within) {
			continue
		}
		tasks, err := os.ReadDir(filepath.Join(proc, strconv.Itoa(pid), "task"))
		if err != nil {
			continue
		}
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				out = append(out, tid)
			}
		}
	}
	return out, nil
}

// inCgroup says whether the /proc/<pid>/cgroup file at path names a cgroup path that passes within.
func inCgroup(path string, within func(string) bool) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && within(parts[2]) {
			return true
		}
	}
	return false
}

// idList reads a file of one decimal ID per line.
func idList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if id, err := strconv.Atoi(f); err == nil && id > 0 {
			out = append(out, id)
		}
	}
	return out, nil
}

// Window is a group's threads over a window, from the samples at its ends.
type Window struct {
	// OnCPU and Waited are the threads' time on a CPU and waiting for one, summed.
	OnCPU, Waited time.Duration
	// Threads are the threads seen at the window's end; Started those of them not seen at its
	// start (counted from their own start); Lost those seen at the start only (ended within the
	// window: their last stretch is missing).
	Threads, Started, Lost int
	// Busiest is the most time one thread was on a CPU.
	Busiest time.Duration
}

// Sub is the window from earlier to t.
func (t Tasks) Sub(earlier Tasks) Window {
	var w Window
	for tid, end := range t {
		start, seen := earlier[tid]
		if !seen || end.OnCPU < start.OnCPU || end.Waited < start.Waited {
			// New within the window (or an ID reused by a new thread): all of it is the window's.
			start = Task{}
			w.Started++
		}
		on, wait := end.OnCPU-start.OnCPU, end.Waited-start.Waited
		w.OnCPU += on
		w.Waited += wait
		w.Busiest = max(w.Busiest, on)
		w.Threads++
	}
	for tid := range earlier {
		if _, ok := t[tid]; !ok {
			w.Lost++
		}
	}
	return w
}
