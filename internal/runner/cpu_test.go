package runner

import (
	"testing"
	"time"
)

// TestThreadMargin: the parts' threads are read an eighth of the load inside each end, at least a
// quarter of a second (pgbench's connections open first) and at most two; a load too short to
// leave half of it between the samples is not read.
func TestThreadMargin(t *testing.T) {
	for _, tc := range []struct {
		load, want time.Duration
	}{
		{load: 0, want: 0},
		{load: 900 * time.Millisecond, want: 0},
		{load: time.Second, want: 250 * time.Millisecond},
		{load: 4 * time.Second, want: 500 * time.Millisecond},
		{load: 10 * time.Second, want: 1250 * time.Millisecond},
		{load: time.Minute, want: 2 * time.Second},
	} {
		if got := threadMargin(tc.load); got != tc.want {
			t.Errorf("threadMargin(%v) = %v, want %v", tc.load, got, tc.want)
		}
	}
}
