package runner

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/cgroupcpu"
	"github.com/tunnelbench/tunnelbench/internal/report"
)

// cpuWindow samples the runner container's cgroup at the start of the measured window; stop
// samples it again at the end. The container holds pgbench and the runner itself: the client side
// of the path, without the tunnels' and the pooler's sidecars (containers of their own).
type cpuWindow struct {
	root  string
	start cgroupcpu.Sample
	at    time.Time
	err   error
}

func startCPU(root string) *cpuWindow {
	w := &cpuWindow{root: cmp.Or(root, cgroupcpu.Root)}
	w.start, w.err = cgroupcpu.Read(w.root)
	w.at = time.Now()
	return w
}

// stop is the window's accounting, or nil (said on out) when the cgroup could not be read: a
// figure is never guessed.
func (w *cpuWindow) stop(out io.Writer) *report.CPU {
	end, err := cgroupcpu.Read(w.root)
	window := time.Since(w.at)
	if err = cmp.Or(w.err, err); err != nil {
		fmt.Fprintf(out, "tunnelbench-runner: the container's CPU time is not known: %v\n", err)
		return nil
	}
	d := end.Sub(w.start)
	return &report.CPU{UserSeconds: d.User.Seconds(), SystemSeconds: d.System.Seconds(), WindowSeconds: window.Seconds(),
		Periods: d.Periods, Throttled: d.Throttled, ThrottledSeconds: d.ThrottledTime.Seconds(), CgroupVersion: d.Version}
}
