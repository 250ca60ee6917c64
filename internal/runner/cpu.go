package runner

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/cgroupcpu"
	"github.com/tunnelbench/tunnelbench/internal/report"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
)

// cpuWindow samples the CPU accounting of the runner's own container (pgbench and the runner:
// the client) and of each sidecar (its loopback endpoint) at the start of the measured window;
// stop samples them again at the end.
type cpuWindow struct {
	root   string
	parts  []runspec.CPUPart
	at     time.Time
	client sampled
	starts []sampled
}

type sampled struct {
	s   cgroupcpu.Sample
	err error
}

func startCPU(ctx context.Context, root string, parts []runspec.CPUPart) *cpuWindow {
	w := &cpuWindow{root: cmp.Or(root, cgroupcpu.Root), parts: parts}
	w.starts = w.sampleParts(ctx)
	w.client.s, w.client.err = cgroupcpu.Read(w.root)
	w.at = time.Now()
	return w
}

func (w *cpuWindow) sampleParts(ctx context.Context) []sampled {
	out := make([]sampled, len(w.parts))
	for i, p := range w.parts {
		out[i].s, out[i].err = cgroupcpu.Fetch(ctx, p.URL())
	}
	return out
}

// stop is the window's accounting of the client (nil when its cgroup could not be read) and of
// each sidecar that answered both times; what is not known is said on out, never guessed.
func (w *cpuWindow) stop(ctx context.Context, out io.Writer) (*report.CPU, []report.SidecarCPU) {
	end, err := cgroupcpu.Read(w.root)
	window := time.Since(w.at).Seconds()
	ends := w.sampleParts(ctx)
	var client *report.CPU
	if err = cmp.Or(w.client.err, err); err != nil {
		fmt.Fprintf(out, "tunnelbench-runner: the container's CPU time is not known: %v\n", err)
	} else {
		client = cpuOf(end.Sub(w.client.s), window)
	}
	var sidecars []report.SidecarCPU
	for i, p := range w.parts {
		if err := cmp.Or(w.starts[i].err, ends[i].err); err != nil {
			fmt.Fprintf(out, "tunnelbench-runner: the CPU time of sidecar %s is not known: %v\n", p.Name, err)
			continue
		}
		sidecars = append(sidecars, report.SidecarCPU{Part: p.Name, Remote: p.Host != "",
			CPU: *cpuOf(ends[i].s.Sub(w.starts[i].s), window)})
	}
	return client, sidecars
}

func cpuOf(d cgroupcpu.Sample, window float64) *report.CPU {
	return &report.CPU{UserSeconds: d.User.Seconds(), SystemSeconds: d.System.Seconds(), WindowSeconds: window,
		Periods: d.Periods, Throttled: d.Throttled, ThrottledSeconds: d.ThrottledTime.Seconds(), CgroupVersion: d.Version}
}
