// Package cgroupcpu reads a container's CPU time from its own cgroup accounting, the way the
// kernel keeps it: cgroup v2's cpu.stat, or cgroup v1's cpuacct and cpu controllers where that is
// what the node has (this project's own machine mounts v1). Inside a container the runtime mounts
// the container's own cgroup at /sys/fs/cgroup, so a process reads what its container used — its
// own and its children's (pgbench, ssh, PgBouncer) — with no privilege.
//
// The counters are cumulative and exact to the microsecond (v2) or nanosecond (v1): a figure over
// a window is the difference of two samples taken at its ends (Sample.Sub).
package cgroupcpu

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/runner/schedstat"
)

// Root is where a container sees its own cgroups.
const Root = "/sys/fs/cgroup"

// Sample is a cgroup's cumulative CPU accounting at one moment.
type Sample struct {
	// Usage is the CPU time of every task of the cgroup, User and System its two parts.
	Usage, User, System time.Duration
	// Periods are the CFS periods in which a CPU limit applied; Throttled those in which the
	// cgroup ran out of its quota, for ThrottledTime in all. Zero without a limit.
	Periods, Throttled uint64
	ThrottledTime      time.Duration
	// Version is the cgroup version read (1 or 2).
	Version int
	// Tasks are the cgroup's threads' own accounting (internal/runner/schedstat): where its time
	// went, and whether one thread was at a full core. Empty where they could not be read.
	Tasks schedstat.Tasks `json:"tasks,omitempty"`
}

// Sub is the accounting between earlier and s; its threads' are Threads'.
func (s Sample) Sub(earlier Sample) Sample {
	return Sample{Usage: s.Usage - earlier.Usage, User: s.User - earlier.User, System: s.System - earlier.System,
		Periods: s.Periods - earlier.Periods, Throttled: s.Throttled - earlier.Throttled,
		ThrottledTime: s.ThrottledTime - earlier.ThrottledTime, Version: s.Version}
}

// Threads is the window of the cgroup's threads from earlier to s.
func (s Sample) Threads(earlier Sample) schedstat.Window { return s.Tasks.Sub(earlier.Tasks) }

// Read samples the cgroup mounted at root: v2 when root holds cgroup.controllers (a unified
// mount), else v1 from root's cpuacct and cpu controllers (mounted apart, or together as
// cpu,cpuacct).
func Read(root string) (Sample, error) {
	if unified(root) {
		return readV2(root)
	}
	return readV1(root)
}

// ReadThreads is Read with the cgroup's threads, through this process's /proc (a container's
// cgroup lists the IDs of its own PID namespace).
func ReadThreads(root string) (Sample, error) {
	s, err := Read(root)
	if err != nil {
		return s, err
	}
	dir := root
	if !unified(root) {
		dir = firstDir(root, "cpuacct", "cpu,cpuacct", "cpuacct,cpu")
	}
	if tids, err := schedstat.CgroupThreads(dir); err == nil {
		s.Tasks = schedstat.Read("/proc", tids)
	}
	return s, nil
}

func unified(root string) bool {
	_, err := os.Stat(filepath.Join(root, "cgroup.controllers"))
	return err == nil
}

// readV2 reads cpu.stat: usage_usec, user_usec, system_usec always; nr_periods, nr_throttled and
// throttled_usec when the cpu controller is enabled for the cgroup.
func readV2(dir string) (Sample, error) {
	stat, err := keyValues(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return Sample{}, err
	}
	usage, ok := stat["usage_usec"]
	if !ok {
		return Sample{}, fmt.Errorf("%s has no usage_usec", filepath.Join(dir, "cpu.stat"))
	}
	return Sample{Version: 2, Usage: micros(usage), User: micros(stat["user_usec"]), System: micros(stat["system_usec"]),
		Periods: stat["nr_periods"], Throttled: stat["nr_throttled"], ThrottledTime: micros(stat["throttled_usec"])}, nil
}

// readV1 reads cpuacct.usage (nanoseconds) with cpuacct.usage_user and cpuacct.usage_sys (also
// nanoseconds; older kernels lack them: cpuacct.stat's ticks then), and cpu.stat's throttling.
func readV1(root string) (Sample, error) {
	acct := firstDir(root, "cpuacct", "cpu,cpuacct", "cpuacct,cpu")
	if acct == "" {
		return Sample{}, fmt.Errorf("no cgroup v2 cpu.stat nor v1 cpuacct controller under %s", root)
	}
	return readV1Dirs(acct, firstDir(root, "cpu", "cpu,cpuacct", "cpuacct,cpu"))
}

// readV1Dirs reads a v1 cgroup from its directories in the cpuacct controller and, when not "",
// the cpu controller.
func readV1Dirs(acct, cpu string) (Sample, error) {
	usage, err := number(filepath.Join(acct, "cpuacct.usage"))
	if err != nil {
		return Sample{}, err
	}
	s := Sample{Version: 1, Usage: time.Duration(usage)}
	user, errU := number(filepath.Join(acct, "cpuacct.usage_user"))
	sys, errS := number(filepath.Join(acct, "cpuacct.usage_sys"))
	if errU == nil && errS == nil {
		s.User, s.System = time.Duration(user), time.Duration(sys)
	} else if ticks, err := keyValues(filepath.Join(acct, "cpuacct.stat")); err == nil {
		// USER_HZ is 100 on every architecture Kubernetes runs on.
		s.User, s.System = time.Duration(ticks["user"])*10*time.Millisecond, time.Duration(ticks["system"])*10*time.Millisecond
	}
	if cpu != "" {
		if stat, err := keyValues(filepath.Join(cpu, "cpu.stat")); err == nil {
			s.Periods, s.Throttled, s.ThrottledTime = stat["nr_periods"], stat["nr_throttled"], time.Duration(stat["throttled_time"])
		}
	}
	return s, nil
}

func micros(v uint64) time.Duration { return time.Duration(v) * time.Microsecond }

// firstDir is the first of root's subdirectories names that exists.
func firstDir(root string, names ...string) string {
	for _, n := range names {
		if fi, err := os.Stat(filepath.Join(root, n)); err == nil && fi.IsDir() {
			return filepath.Join(root, n)
		}
	}
	return ""
}

// keyValues reads a flat keyed file ("key value" per line).
func keyValues(path string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, sc.Text(), err)
		}
		out[key] = n
	}
	return out, sc.Err()
}

// number reads a file holding one unsigned number.
func number(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// Self is the cgroup of the calling process, for tests on a host (inside a container it is Root):
// a directory shaped like a container's view, whose cpuacct and cpu entries (v1: links made in
// dir) or itself (v2) are the process's own cgroups, read from /proc/self/cgroup.
func Self(dir string) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	linked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, controller := range strings.Split(parts[1], ",") {
			if controller != "cpu" && controller != "cpuacct" {
				continue
			}
			mount := firstDir(Root, controller, "cpu,cpuacct", "cpuacct,cpu")
			if mount == "" {
				continue
			}
			if err := os.Symlink(filepath.Join(mount, parts[2]), filepath.Join(dir, controller)); err != nil {
				return "", err
			}
			linked++
		}
	}
	if linked > 0 {
		return dir, nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join(Root, path), nil
		}
	}
	return "", errors.New("no cpu, cpuacct or unified cgroup in /proc/self/cgroup")
}
