package runner

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/runner/cgroupcpu"
)

// maxMisalignment is the share of the window by which a part's samples may miss its ends: beyond
// it, what the part used outside the window (or missed inside it) could exceed a tenth of the
// figure, and the part is reported unmeasured rather than as a number.
const maxMisalignment = 0.10

// cpuWindow samples the CPU accounting of the runner's own container (pgbench and the runner:
// the client) and of each sidecar (its loopback endpoint) or peer (the SSH gateway, the server's
// pod through its node's reader) at the start of the measured window; stop samples them again at
// the end.
type cpuWindow struct {
	root   string
	parts  []runspec.CPUPart
	at     time.Time
	client sampled
	starts []sampled
	// within reads the parts' threads inside the load (readThreadsWithin); nil for a load of a
	// number of transactions, or one too short.
	within *threadWindow
}

// threadWindow is a stretch inside the measured load over which the parts' threads are read:
// pgbench's threads and the server's backends live from the load's connections to its end, so
// samples at the window's ends (before pgbench starts, after it exits) see none of them. Its
// samples are taken a margin after the load started and a margin before its duration is over,
// when every connection is open (pgbench's duration counts from its start, connections included,
// so the second sample comes before the load ends however long they took).
type threadWindow struct {
	cancel    context.CancelFunc
	done      chan struct{}
	client    [2]cgroupcpu.Sample
	clientErr [2]error
	parts     [2][]sampled
	at        [2]time.Time
	taken     int
}

// threadMargin is how far inside a load of that duration its threads are read: an eighth of it,
// between a quarter of a second and two seconds; 0 when the load is too short to leave half of
// it between the samples.
func threadMargin(load time.Duration) time.Duration {
	margin := min(max(load/8, 250*time.Millisecond), 2*time.Second)
	if load < 4*margin {
		return 0
	}
	return margin
}

// readThreadsWithin samples every part, the client first, a margin after now and a margin before
// load is over, in the background; stop uses the two samples' threads when both were taken.
func (w *cpuWindow) readThreadsWithin(ctx context.Context, load time.Duration) {
	margin := threadMargin(load)
	if margin == 0 {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	tw := &threadWindow{cancel: cancel, done: make(chan struct{})}
	w.within = tw
	start := time.Now()
	go func() {
		defer close(tw.done)
		for i, at := range []time.Time{start.Add(margin), start.Add(load - margin)} {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(at)):
			}
			tw.client[i], tw.clientErr[i] = cgroupcpu.ReadThreads(w.root)
			tw.at[i] = time.Now()
			tw.parts[i] = w.sampleParts(ctx, runspec.CPUPart.ThreadsURL)
			tw.taken++
		}
	}()
}

// threads are the client's and each part's threads over the thread window, with its length;
// nil ones where a sample is missing.
func (tw *threadWindow) threads() (client *report.Threads, parts []*report.Threads) {
	if tw == nil {
		return nil, nil
	}
	tw.cancel()
	<-tw.done
	if tw.taken < 2 {
		return nil, nil
	}
	window := tw.at[1].Sub(tw.at[0]).Seconds()
	if tw.clientErr[0] == nil && tw.clientErr[1] == nil {
		client = threadsOf(tw.client[0], tw.client[1], window)
	}
	for i := range tw.parts[0] {
		var t *report.Threads
		if tw.parts[0][i].err == nil && tw.parts[1][i].err == nil {
			t = threadsOf(tw.parts[0][i].s, tw.parts[1][i].s, window)
		}
		parts = append(parts, t)
	}
	return client, parts
}

// threadsOf is a part's threads between two samples over window seconds; nil when either sample
// read none.
func threadsOf(start, end cgroupcpu.Sample, window float64) *report.Threads {
	if len(start.Tasks) == 0 || len(end.Tasks) == 0 || window <= 0 {
		return nil
	}
	t := end.Threads(start)
	return &report.Threads{OnCPUSeconds: t.OnCPU.Seconds(), WaitedSeconds: t.Waited.Seconds(), BusiestSeconds: t.Busiest.Seconds(),
		Count: t.Threads, Started: t.Started, Lost: t.Lost, WindowSeconds: window}
}

// sampled is one sample, with when its request left (sent) and its answer came back (got): the
// counter was read somewhere between.
type sampled struct {
	s         cgroupcpu.Sample
	err       error
	sent, got time.Time
}

// partsWait bounds awaitParts: beyond it a part is left to the window's samples, which say it is
// not known.
const partsWait = 15 * time.Second

// awaitParts asks every part until it answers, each at most until wait, all at once.
func awaitParts(ctx context.Context, out io.Writer, parts []runspec.CPUPart, wait time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Go(func() {
			for {
				_, err := cgroupcpu.Fetch(ctx, p.URL())
				if err == nil {
					return
				}
				select {
				case <-ctx.Done():
					fmt.Fprintf(out, "tunnelbench-runner: part %s does not answer at %s: %v\n", p.Name, p.URL(), err)
					return
				case <-time.After(250 * time.Millisecond):
				}
			}
		})
	}
	wg.Wait()
}

func startCPU(ctx context.Context, root string, parts []runspec.CPUPart) *cpuWindow {
	w := &cpuWindow{root: cmp.Or(root, cgroupcpu.Root), parts: parts}
	w.starts = w.sampleParts(ctx, runspec.CPUPart.URL)
	w.client.s, w.client.err = cgroupcpu.Read(w.root)
	w.at = time.Now()
	return w
}

// sampleParts asks every part at once: a slow one must not move the others' samples away from
// the window's ends.
func (w *cpuWindow) sampleParts(ctx context.Context, url func(runspec.CPUPart) string) []sampled {
	out := make([]sampled, len(w.parts))
	var wg sync.WaitGroup
	for i, p := range w.parts {
		wg.Go(func() {
			out[i].sent = time.Now()
			out[i].s, out[i].err = cgroupcpu.Fetch(ctx, url(p))
			out[i].got = time.Now()
		})
	}
	wg.Wait()
	return out
}

// stop is the window's accounting of the client (nil when its cgroup could not be read) and of
// each part that answered both times close enough to the window's ends; what is not known is
// said on out and in unmeasured, never guessed.
func (w *cpuWindow) stop(ctx context.Context, out io.Writer) (client *report.CPU, parts []report.SidecarCPU,
	unmeasured []report.Unmeasured) {
	clientThreads, partThreads := w.within.threads()
	end, err := cgroupcpu.Read(w.root)
	ended := time.Now()
	window := ended.Sub(w.at).Seconds()
	ends := w.sampleParts(ctx, runspec.CPUPart.URL)
	unknown := func(part, why string) {
		fmt.Fprintf(out, "tunnelbench-runner: the CPU time of %s is not known: %s\n", part, why)
		unmeasured = append(unmeasured, report.Unmeasured{Part: part, Reason: bounded.Text(why, 200)})
	}
	if err = cmp.Or(w.client.err, err); err != nil {
		unknown(runspec.RunnerContainerName, err.Error())
	} else {
		client = cpuOf(end.Sub(w.client.s), window)
		client.Threads = clientThreads
	}
	for i, p := range w.parts {
		if err := cmp.Or(w.starts[i].err, ends[i].err); err != nil {
			unknown(p.Name, err.Error())
			continue
		}
		// The counter was read between sent and got: the window's ends may be missed by up to
		// this much in all.
		off := w.at.Sub(w.starts[i].sent) + ends[i].got.Sub(ended)
		if window <= 0 || off.Seconds() > maxMisalignment*window {
			unknown(p.Name, fmt.Sprintf("its samples were taken up to %v from the window's ends, more than %.0f %% of its %.1f s",
				off.Round(time.Millisecond), 100*maxMisalignment, window))
			continue
		}
		part := report.SidecarCPU{Part: p.Name, Remote: p.Host != "", CPU: *cpuOf(ends[i].s.Sub(w.starts[i].s), window)}
		if i < len(partThreads) {
			part.Threads = partThreads[i]
		}
		parts = append(parts, part)
	}
	return client, parts, unmeasured
}

func cpuOf(d cgroupcpu.Sample, window float64) *report.CPU {
	return &report.CPU{UserSeconds: d.User.Seconds(), SystemSeconds: d.System.Seconds(), WindowSeconds: window,
		Periods: d.Periods, Throttled: d.Throttled, ThrottledSeconds: d.ThrottledTime.Seconds(), CgroupVersion: d.Version}
}
