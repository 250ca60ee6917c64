package runner

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
)

// TestLiveSumsTunnels: with two tunnels an interval is published once both reported it, as their
// sum, the latency weighted by each one's tps; a partial line waits for its end.
func TestLiveSumsTunnels(t *testing.T) {
	var mu sync.Mutex
	var got []runspec.Live
	lv, stop := followLive(context.Background(), func(_ context.Context, l runspec.Live) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, l)
		return nil
	}, runspec.LiveLoad, runspec.Load{Duration: 10 * time.Second}, 2)
	w0, w1 := lv.writer(0, pgbench.ParseProgress), lv.writer(1, pgbench.ParseProgress)
	_, _ = fmt.Fprint(w0, "progress: 1.0 s, 100.0 tps, lat 2.000 ms stddev 0.1, 0 failed\n")
	time.Sleep(50 * time.Millisecond) // tunnel 1 has not reported: nothing yet
	mu.Lock()
	early := len(got)
	mu.Unlock()
	_, _ = fmt.Fprint(w1, "progress: 1.0 s, 300.0 tps, lat 4.0")
	_, _ = fmt.Fprint(w1, "00 ms stddev 0.1, 0 failed\nstarting vacuum...\n")
	stop()
	if early != 0 || len(got) != 1 {
		t.Fatalf("published %d before both reported, %d after", early, len(got))
	}
	l := got[0]
	if l.TPS != 400 || l.LatencyMs != 3.5 || l.ElapsedSeconds != 1 || l.DurationSeconds != 10 || l.Phase != runspec.LiveLoad {
		t.Errorf("live %+v", l)
	}
}
