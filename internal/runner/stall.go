package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// errStalled is the cause of a phase's cancellation by its stallWatch.
var errStalled = errors.New("stalled")

// stallWatch stops the pgbench processes of one phase when one of them has gone a whole timeout
// without a progress report showing a completed transaction (or without any report). A partitioned
// network, a hung server or a path that lost its peer leaves pgbench waiting on its sockets, where
// no error would come before the Job's deadline; pgbench still prints its progress reports while it
// waits (0.0 tps), and nothing at all when it cannot even connect.
type stallWatch struct {
	timeout time.Duration
	start   time.Time
	cancel  context.CancelCauseFunc

	mu       sync.Mutex
	last     []time.Time // per process: the latest report with transactions, or the start
	done     []bool
	stalled  int // the process that stalled, -1 while none has
	stalledT time.Duration
}

// watchStall returns the phase's context, cancelled with errStalled when a process stalls, and its
// watch; stop ends it. A timeout of 0 watches nothing.
func watchStall(ctx context.Context, timeout time.Duration, n int) (context.Context, *stallWatch, func()) {
	if timeout <= 0 {
		return ctx, nil, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := &stallWatch{timeout: timeout, start: time.Now(), cancel: cancel, last: make([]time.Time, n), done: make([]bool, n),
		stalled: -1}
	for i := range w.last {
		w.last[i] = w.start
	}
	quit := make(chan struct{})
	go func() {
		tick := time.NewTicker(min(timeout/10, time.Second))
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				if w.check(now) {
					cancel(errStalled)
					return
				}
			}
		}
	}()
	return ctx, w, func() { close(quit); cancel(nil) }
}

// check reports whether a running process has stalled at now, and remembers which.
func (w *stallWatch) check(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, last := range w.last {
		if !w.done[i] && now.Sub(last) >= w.timeout {
			w.stalled, w.stalledT = i, now.Sub(w.start)
			return true
		}
	}
	return false
}

// writer is process i's tee: a progress report (read with progress) with transactions resets its
// clock.
func (w *stallWatch) writer(i int, progress func(string) (engine.ProgressPoint, bool)) *lineWriter {
	if w == nil {
		return nil
	}
	return &lineWriter{line: func(s string) {
		if p, ok := progress(s); ok && p.TPS > 0 {
			w.mu.Lock()
			w.last[i] = time.Now()
			w.mu.Unlock()
		}
	}}
}

// exited marks process i as ended: it can no longer stall.
func (w *stallWatch) exited(i int) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.done[i] = true
	w.mu.Unlock()
}

// failure is the Stalled failure when the watch stopped the phase, nil otherwise.
func (w *stallWatch) failure(phase string, n int) *FailureError {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stalled < 0 {
		return nil
	}
	which := "pgbench"
	if n > 1 {
		which = fmt.Sprintf("pgbench on tunnel %d of %d", w.stalled, n)
	}
	return &FailureError{Reason: conditions.ReasonStalled, Message: fmt.Sprintf(
		"no transaction completed for %s (spec.load.stallTimeout): %s stopped %s into the %s. The path to the server "+
			"stopped answering without an error: a network partition, a server that hangs or was replaced, or a "+
			"tunnel or pooler that lost its peer; raise stallTimeout if the script's transactions last longer",
		w.timeout, which, w.stalledT.Round(time.Second), cmpPhase(phase))}
}

func cmpPhase(phase string) string {
	if phase == "" {
		return "measured load"
	}
	return phase
}
