package runspec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// CPUStatsBasePort is the loopback port of the first sidecar that serves its container's CPU
// accounting (`tunnelbench-runner sidecar --cpu-port`); the next ones follow.
const CPUStatsBasePort = 14500

// CPUStatsPath is where a sidecar serves it.
const CPUStatsPath = "/cpu"

// CPUPart is a sidecar of the runner pod whose container's CPU the runner samples at the ends of
// the measured window: the part of the path it is (its container's name) and its port.
type CPUPart struct {
	Name string
	Port int
}

var partName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// cpuPartsValue renders parts as --cpu-parts reads them: name=port,name=port.
func cpuPartsValue(parts []CPUPart) string {
	var out []string
	for _, p := range parts {
		out = append(out, p.Name+"="+strconv.Itoa(p.Port))
	}
	return strings.Join(out, ",")
}

// parseCPUParts reads --cpu-parts.
func parseCPUParts(s string) ([]CPUPart, error) {
	var out []CPUPart
	for _, item := range strings.Split(s, ",") {
		name, port, ok := strings.Cut(item, "=")
		n, err := strconv.Atoi(port)
		if !ok || err != nil {
			return nil, fmt.Errorf("--cpu-parts: %q is not name=port", item)
		}
		out = append(out, CPUPart{Name: name, Port: n})
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
		if p.Port < 1 || p.Port > 65535 {
			errs = append(errs, fmt.Sprintf("--cpu-parts: port %d of %s is out of range", p.Port, p.Name))
		}
	}
	return errs
}
