package transport

import (
	"slices"
	"strconv"

	"github.com/tunnelbench/tunnelbench/internal/runspec"
	"github.com/tunnelbench/tunnelbench/internal/specs"
)

// MeasureSidecars has every sidecar of the runner pod (tunnels, the link proxy, a sidecar pooler)
// run under `tunnelbench-runner sidecar`, which serves its container's CPU accounting on a
// loopback port of its own, and tells the runner to sample each one at the ends of its measured
// window: one place for every transport, after the pod is complete. Part names are the
// containers' names.
func MeasureSidecars(pod *specs.Pod, run *runspec.Run) {
	for i := range pod.Sidecars {
		c := &pod.Sidecars[i]
		port := runspec.CPUStatsBasePort + i
		args := slices.Concat([]string{"sidecar", "--cpu-port=" + strconv.Itoa(port), "--"}, c.Command, c.Args)
		c.Command, c.Args = []string{"tunnelbench-runner"}, args
		run.CPUParts = append(run.CPUParts, runspec.CPUPart{Name: c.Name, Port: port})
	}
}
