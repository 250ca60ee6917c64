package cgroupcpu

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/runner/schedstat"
)

const uid = "0f3c2a9e-5b7d-4c1e-9a2b-3d4e5f6a7b8c"

// writeFiles makes files (path: content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadPodLayouts: a pod's cgroup where each cgroup driver and QoS class puts it, in a node's
// v1 and v2 hierarchies; and what is not there or not a pod.
func TestReadPodLayouts(t *testing.T) {
	u := "0f3c2a9e_5b7d_4c1e_9a2b_3d4e5f6a7b8c"
	v2 := "usage_usec 3000\nuser_usec 2000\nsystem_usec 1000\n"
	v2Want := Sample{Version: 2, Usage: 3 * time.Millisecond, User: 2 * time.Millisecond, System: time.Millisecond}
	v1Want := Sample{Version: 1, Usage: 5 * time.Second, User: 3 * time.Second, System: 2 * time.Second,
		Periods: 4, Throttled: 1, ThrottledTime: time.Millisecond}
	v1 := func(dir string) map[string]string {
		return map[string]string{"cpuacct/" + dir + "/cpuacct.usage": "5000000000", "cpuacct/" + dir + "/cpuacct.usage_user": "3000000000",
			"cpuacct/" + dir + "/cpuacct.usage_sys": "2000000000",
			"cpu/" + dir + "/cpu.stat":              "nr_periods 4\nnr_throttled 1\nthrottled_time 1000000\n"}
	}
	tests := []struct {
		name  string
		files map[string]string
		uid   string
		want  Sample
		err   error
	}{
		{"v1 cgroupfs, burstable", v1("kubepods/burstable/pod" + uid), uid, v1Want, nil},
		{"v1 cgroupfs, guaranteed", v1("kubepods/pod" + uid), uid, v1Want, nil},
		{"v1 systemd, besteffort", v1("kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + u + ".slice"), uid, v1Want, nil},
		{"v2 systemd, burstable", map[string]string{"cgroup.controllers": "cpu\n",
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + u + ".slice/cpu.stat": v2}, uid, v2Want, nil},
		{"v2 cgroupfs, guaranteed", map[string]string{"cgroup.controllers": "cpu\n", "kubepods/pod" + uid + "/cpu.stat": v2}, uid, v2Want, nil},
		{"v2, a kubelet's cgroupRoot one level down", map[string]string{"cgroup.controllers": "cpu\n",
			"node-2/kubepods/burstable/pod" + uid + "/cpu.stat": v2}, uid, v2Want, nil},
		{"v1, a kubelet's cgroupRoot one level down", v1("node-2/kubepods/besteffort/pod" + uid), uid, v1Want, nil},
		{"v2, a pod two levels down: no kubelet root", map[string]string{"cgroup.controllers": "cpu\n",
			"a/b/kubepods/pod" + uid + "/cpu.stat": v2}, uid, Sample{}, ErrNoPod},
		{"another pod's", v1("kubepods/burstable/pod" + uid), "1f3c2a9e-5b7d-4c1e-9a2b-3d4e5f6a7b8c", Sample{}, ErrNoPod},
		{"a path for a UID", v1("kubepods/burstable/pod" + uid), "../../../etc", Sample{}, ErrNotUID},
		{"a UID in capitals", v1("kubepods/burstable/pod" + uid), "0F3C2A9E-5B7D-4C1E-9A2B-3D4E5F6A7B8C", Sample{}, ErrNotUID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tt.files)
			got, err := ReadPod(root, "", tt.uid)
			if !errors.Is(err, tt.err) || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadPod = %+v, %v; want %+v, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

// TestReadPodRealCgroup: a node-shaped hierarchy whose pod cgroup is this process's own (links to
// the kernel's files) grows by at least the CPU this test burns, read through PodHandler.
func TestReadPodRealCgroup(t *testing.T) {
	own, err := Self(t.TempDir())
	if err != nil {
		t.Skipf("no cgroup to read here: %v", err)
	}
	root := t.TempDir()
	if _, err := os.Stat(filepath.Join(own, "cgroup.controllers")); err == nil {
		// v2: the pod's directory is the process's own cgroup.
		writeFiles(t, root, map[string]string{"cgroup.controllers": ""})
		mustLink(t, own, filepath.Join(root, "kubepods", "burstable", "pod"+uid))
	} else {
		for _, c := range []string{"cpu", "cpuacct"} {
			if target, err := os.Readlink(filepath.Join(own, c)); err == nil {
				mustLink(t, target, filepath.Join(root, c, "kubepods", "burstable", "pod"+uid))
			}
		}
	}
	srv := httptest.NewServer(PodHandler(root, ""))
	defer srv.Close()
	get := func() Sample {
		resp, err := http.Get(srv.URL + "/cpu?pod=" + uid)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var s Sample
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&s) != nil {
			t.Fatalf("%s", resp.Status)
		}
		return s
	}
	before := get()
	burn(300 * time.Millisecond)
	if d := get().Sub(before); d.Usage < 250*time.Millisecond {
		t.Errorf("%v of CPU over 300 ms of work (cgroup v%d)", d.Usage, d.Version)
	}
	other := "pod=1f3c2a9e-5b7d-4c1e-9a2b-3d4e5f6a7b8c"
	for query, status := range map[string]int{other: http.StatusNotFound, "pod=..": http.StatusBadRequest} {
		resp, err := http.Get(srv.URL + "/cpu?" + query)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("%s: %s, want %d", query, resp.Status, status)
		}
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestPodHandlerThreadsWhenAsked: the node reader scans the node's /proc for a pod's threads only
// when asked (within the load), never for the window's ends.
func TestPodHandlerThreadsWhenAsked(t *testing.T) {
	root, proc := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{"cgroup.controllers": "cpu\n", "kubepods/pod" + uid + "/cpu.stat": "usage_usec 1\n"})
	writeFiles(t, proc, map[string]string{"7/cgroup": "0::/kubepods/pod" + uid + "/c\n", "7/task/7/schedstat": "5 6 1\n",
		"7/schedstat": "5 6 1\n"})
	srv := httptest.NewServer(PodHandler(root, proc))
	defer srv.Close()
	for query, want := range map[string]int{"": 0, "&threads=1": 1} {
		resp, err := http.Get(srv.URL + "/cpu?pod=" + uid + query)
		if err != nil {
			t.Fatal(err)
		}
		var s Sample
		err = json.NewDecoder(resp.Body).Decode(&s)
		_ = resp.Body.Close()
		if err != nil || len(s.Tasks) != want {
			t.Errorf("query %q: %d threads (%v), want %d", query, len(s.Tasks), err, want)
		}
	}
}

// TestReadPodThreads: the pod's threads are found through the node's /proc by the cgroup path of
// their process, with either cgroup driver's names, and another pod's are not.
func TestReadPodThreads(t *testing.T) {
	u := strings.ReplaceAll(uid, "-", "_")
	other := "1f3c2a9e-5b7d-4c1e-9a2b-3d4e5f6a7b8c"
	for _, tc := range []struct {
		name, line string
		want       schedstat.Tasks
	}{
		{"cgroupfs", "4:cpu,cpuacct:/kubepods/burstable/pod" + uid + "/abc\n", schedstat.Tasks{7: {OnCPU: 5, Waited: 6}}},
		{"systemd", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + u + ".slice/cri-containerd-1.scope\n",
			schedstat.Tasks{7: {OnCPU: 5, Waited: 6}}},
		{"another pod", "4:cpu,cpuacct:/kubepods/burstable/pod" + other + "/abc\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, proc := t.TempDir(), t.TempDir()
			writeFiles(t, root, map[string]string{"cgroup.controllers": "cpu\n", "kubepods/pod" + uid + "/cpu.stat": "usage_usec 1\n"})
			writeFiles(t, proc, map[string]string{"7/cgroup": tc.line, "7/task/7/schedstat": "5 6 1\n", "7/schedstat": "5 6 1\n"})
			got, err := ReadPod(root, proc, uid)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Tasks, tc.want) {
				t.Errorf("threads %v, want %v", got.Tasks, tc.want)
			}
		})
	}
}
