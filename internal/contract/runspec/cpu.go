package runspec

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// CPUStatsBasePort is the loopback port of the first sidecar that serves its container's CPU
// accounting (`tunnelbench-runner sidecar --cpu-port`); the next ones follow.
const CPUStatsBasePort = 14500

// CPUStatsPath is where a sidecar serves it.
const CPUStatsPath = "/cpu"

// PeerCPUPort is where a peer pod next to the server (the SSH gateway) serves its container's
// CPU accounting to the benchmark's runner pods (its NetworkPolicy admits them on it).
const PeerCPUPort = 14600

// NodeReaderPort is where the chart's node reader (`tunnelbench-runner node-reader`, a DaemonSet)
// serves the accounting of the pods of its node, by UID: the server's pod, for the runner.
const NodeReaderPort = 14700

// CPUPart is a part of the path whose container's CPU the runner samples at the ends of the
// measured window: a sidecar of the runner pod on a loopback port, or a peer pod (Host set) such as
// the SSH gateway, or the node reader of the server's node (Host set, Pod the server pod's UID).
// Name is the part's name (a sidecar's container name).
type CPUPart struct {
	Name string
	Host string
	Port int
	Pod  string
}

// URL is where the runner asks for the part's accounting.
func (p CPUPart) URL() string {
	host := p.Host
	if host == "" {
		host = "127.0.0.1"
	}
	u := "http://" + net.JoinHostPort(host, strconv.Itoa(p.Port)) + CPUStatsPath
	if p.Pod != "" {
		u += "?pod=" + url.QueryEscape(p.Pod)
	}
	return u
}

// ThreadsQuery is the query parameter that asks a part's sample for its threads too (read within
// the load only: the window's ends need the counters alone, as fast as they can be read).
const ThreadsQuery = "threads"

// ThreadsURL is URL asking for the part's threads too.
func (p CPUPart) ThreadsURL() string {
	u := p.URL()
	if p.Pod != "" {
		return u + "&" + ThreadsQuery + "=1"
	}
	return u + "?" + ThreadsQuery + "=1"
}

var podUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

var partName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// cpuPartsValue renders parts as --cpu-parts reads them: name=port, name=host:port or
// name=host:port/pod-uid, by commas.
func cpuPartsValue(parts []CPUPart) string {
	var out []string
	for _, p := range parts {
		where := strconv.Itoa(p.Port)
		if p.Host != "" {
			where = net.JoinHostPort(p.Host, where)
		}
		if p.Pod != "" {
			where += "/" + p.Pod
		}
		out = append(out, p.Name+"="+where)
	}
	return strings.Join(out, ",")
}

// parseCPUParts reads --cpu-parts.
func parseCPUParts(s string) ([]CPUPart, error) {
	var out []CPUPart
	for _, item := range strings.Split(s, ",") {
		name, where, ok := strings.Cut(item, "=")
		where, pod, _ := strings.Cut(where, "/")
		host, port := "", where
		if strings.Contains(where, ":") {
			var err error
			if host, port, err = net.SplitHostPort(where); err != nil {
				return nil, fmt.Errorf("--cpu-parts: %q: %w", item, err)
			}
		}
		n, err := strconv.Atoi(port)
		if !ok || err != nil {
			return nil, fmt.Errorf("--cpu-parts: %q is not name=port or name=host:port", item)
		}
		out = append(out, CPUPart{Name: name, Host: host, Port: n, Pod: pod})
	}
	return out, nil
}

func cpuPartProblems(parts []CPUPart) []string {
	var errs []string
	seen := map[string]bool{}
	for _, p := range parts {
		if !partName.MatchString(p.Name) || seen[p.Name] {
			errs = append(errs, fmt.Sprintf("--cpu-parts: part %q is not a unique container name", p.Name))
		}
		seen[p.Name] = true
		if p.Pod != "" && (p.Host == "" || !podUID.MatchString(p.Pod)) {
			errs = append(errs, fmt.Sprintf("--cpu-parts: part %s: %q is not a pod UID on a node reader's host", p.Name, p.Pod))
		}
		if p.Port < 1 || p.Port > 65535 {
			errs = append(errs, fmt.Sprintf("--cpu-parts: port %d of %s is out of range", p.Port, p.Name))
		}
	}
	return errs
}
