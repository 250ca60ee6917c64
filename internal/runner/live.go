package runner

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// live follows the progress lines of the pgbench processes of one phase (one per tunnel) and
// publishes their sum (runspec.Live) as each interval completes: the latest figure goes out in
// the background, so a slow API server never holds pgbench's output, and a newer figure replaces
// one not yet sent.
type live struct {
	phase    string
	duration time.Duration
	n        int

	mu     sync.Mutex
	points map[int]engine.ProgressPoint
	latest chan runspec.Live
}

// followLive starts publishing a phase's progress with publish (nil: nothing is followed);
// stop ends it once the phase is over, after the last figure went out.
func followLive(ctx context.Context, publish func(context.Context, runspec.Live) error, phase string,
	load runspec.Load, n int) (l *live, stop func()) {
	if publish == nil {
		return nil, func() {}
	}
	l = &live{phase: phase, duration: load.Duration, n: n, points: map[int]engine.ProgressPoint{},
		latest: make(chan runspec.Live, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := range l.latest {
			// Best effort: a figure lost to the API server is replaced by the next one.
			_ = publish(ctx, v)
		}
	}()
	return l, func() { close(l.latest); <-done }
}

// writer is process i's tee: it reads its progress lines with progress.
func (l *live) writer(i int, progress func(string) (engine.ProgressPoint, bool)) *lineWriter {
	if l == nil {
		return nil
	}
	return &lineWriter{line: func(s string) {
		if p, ok := progress(s); ok {
			l.observe(i, p)
		}
	}}
}

// observe records process i's report and publishes the sum once every process has reported for
// that interval.
func (l *live) observe(i int, p engine.ProgressPoint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.points[i] = p
	v := runspec.Live{Phase: l.phase, DurationSeconds: l.duration.Seconds(), Time: time.Now().UTC()}
	var latency float64
	for j := range l.n {
		q, ok := l.points[j]
		if !ok || q.T < p.T {
			return
		}
		v.TPS += q.TPS
		latency += q.LatencyMs * q.TPS
	}
	v.ElapsedSeconds = p.T
	if v.TPS > 0 {
		v.LatencyMs = latency / v.TPS
	}
	select {
	case <-l.latest:
	default:
	}
	l.latest <- v
}

// lineWriter calls line for every complete line written to it.
type lineWriter struct {
	line func(string)
	buf  bytes.Buffer
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		w.line(string(w.buf.Next(i + 1)[:i]))
	}
	return len(b), nil
}
