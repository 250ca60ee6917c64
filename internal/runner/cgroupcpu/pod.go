package cgroupcpu

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/runner/schedstat"
)

// A pod's cgroup, read from a node's cgroup hierarchy (the host's /sys/fs/cgroup mounted read-only
// into the node reader): the sum of its containers, the pause container's few microseconds
// included. The kubelet names it after the pod's UID, under its QoS class, with either cgroup
// driver, below its cgroupRoot: the hierarchy's top by default, or one level down (kubeletRoots);
// no other lookup (no walk, no container runtime) is needed.

// podUID is a pod's UID as the API server writes it.
var podUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// podPaths are where the kubelet puts the cgroup of the pod uid, relative to a hierarchy's root:
// the cgroupfs driver's names, then the systemd driver's, for the Guaranteed, Burstable and
// BestEffort classes.
func podPaths(uid string) []string {
	u := strings.ReplaceAll(uid, "-", "_")
	return []string{
		filepath.Join("kubepods", "pod"+uid),
		filepath.Join("kubepods", "burstable", "pod"+uid),
		filepath.Join("kubepods", "besteffort", "pod"+uid),
		filepath.Join("kubepods.slice", "kubepods-pod"+u+".slice"),
		filepath.Join("kubepods.slice", "kubepods-burstable.slice", "kubepods-burstable-pod"+u+".slice"),
		filepath.Join("kubepods.slice", "kubepods-besteffort.slice", "kubepods-besteffort-pod"+u+".slice"),
	}
}

// ErrNotUID is returned for a pod "UID" the API server would not have written.
var ErrNotUID = errors.New("not a pod UID")

// ErrNoPod is returned when the node has no cgroup of the pod: it does not run here.
var ErrNoPod = errors.New("no cgroup of the pod on this node")

// ReadPod samples the cgroup of the pod uid in the node's hierarchy mounted at root: cgroup v2
// when root is a unified mount, else v1's cpuacct and cpu controllers; and its threads through the
// node's /proc mounted at proc ("" for none).
func ReadPod(root, proc, uid string) (Sample, error) {
	s, err := readPodCgroup(root, uid)
	if err != nil || proc == "" {
		return s, err
	}
	u := strings.ReplaceAll(uid, "-", "_")
	tids, err := schedstat.PodThreads(proc, func(path string) bool {
		return strings.Contains(path, "/pod"+uid) || strings.Contains(path, "-pod"+u+".slice")
	})
	if err == nil {
		s.Tasks = schedstat.Read(proc, tids)
	}
	return s, nil
}

func readPodCgroup(root, uid string) (Sample, error) {
	if !podUID.MatchString(uid) {
		return Sample{}, fmt.Errorf("%q: %w", uid, ErrNotUID)
	}
	unified := fileExists(filepath.Join(root, "cgroup.controllers"))
	acctRoot := firstDir(root, "cpuacct", "cpu,cpuacct", "cpuacct,cpu")
	cpuRoot := firstDir(root, "cpu", "cpu,cpuacct", "cpuacct,cpu")
	top := root
	if !unified {
		top = acctRoot
	}
	if top == "" {
		return Sample{}, fmt.Errorf("%w (%s)", ErrNoPod, uid)
	}
	for _, kubelet := range kubeletRoots(top) {
		for _, p := range podPaths(uid) {
			rel := filepath.Join(kubelet, p)
			switch {
			case unified && fileExists(filepath.Join(root, rel, "cpu.stat")):
				return readV2(filepath.Join(root, rel))
			case !unified && fileExists(filepath.Join(acctRoot, rel, "cpuacct.usage")):
				cpu := filepath.Join(cpuRoot, rel)
				if cpuRoot == "" || !fileExists(cpu) {
					cpu = ""
				}
				return readV1Dirs(filepath.Join(acctRoot, rel), cpu)
			}
		}
	}
	return Sample{}, fmt.Errorf("%w (%s)", ErrNoPod, uid)
}

// kubeletRoots are the cgroupRoots, relative to the hierarchy at top, under which a kubelet may
// keep its pods: the top itself (the default, "/"), then each child holding a kubepods cgroup,
// for a kubelet given a cgroupRoot one level down (as the local cluster's second node, whose
// kubelet shares the host's hierarchy with the first's).
func kubeletRoots(top string) []string {
	roots := []string{""}
	entries, err := os.ReadDir(top)
	if err != nil {
		return roots
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), "kubepods") {
			continue
		}
		if fileExists(filepath.Join(top, e.Name(), "kubepods")) || fileExists(filepath.Join(top, e.Name(), "kubepods.slice")) {
			roots = append(roots, e.Name())
		}
	}
	return roots
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// PodHandler serves ReadPod for the pod named by the query's pod parameter, read at each request:
// the node reader answers the runner of a benchmark whose server runs on its node. It serves CPU
// counters only (the cgroup's, and its threads' by thread ID: no name, no command line), of a pod
// whose UID the asker already knows.
func PodHandler(root, proc string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		threadsRoot := ""
		if r.URL.Query().Has(runspec.ThreadsQuery) {
			threadsRoot = proc
		}
		s, err := ReadPod(root, threadsRoot, r.URL.Query().Get("pod"))
		switch {
		case errors.Is(err, ErrNoPod):
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		case errors.Is(err, ErrNotUID):
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	})
}
