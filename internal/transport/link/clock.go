package link

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Margins of sleepUntil: the Go timer serves all but the last coarseMargin (plus a 500th of the
// wait) of a wait, the kernel's high-resolution timer all but the last spinMargin, and a spin the
// rest. The Go timer can be interrupted, but its netpoller wakes up to a millisecond late, and
// later for long waits (the kernel lets a poll's timeout slip by a thousandth of it). A nanosleep
// with 1 ns of timer slack wakes about 30 µs late on this machine, more after a long idle (the
// CPU's deeper sleep states): spinning the last 100 µs keeps the median error within tens of
// microseconds, at up to 100 µs of CPU per wait.
const (
	coarseMargin = 2 * time.Millisecond
	spinMargin   = 100 * time.Microsecond
)

// sleepUntil waits until deadline, to within a few tens of microseconds, or returns false when
// interrupt closes first (only during the coarse part: the last couple of milliseconds are not
// interruptible).
//
// Go's timers ride the netpoller, whose epoll_wait takes whole milliseconds: a timer due in 0.4 ms
// fires after 1 ms, one due in 2.4 ms after 3 ms. So the last stretch is a nanosleep on the
// kernel's high-resolution timer, on a thread whose timer slack is 1 ns (50 µs by default lets the
// kernel fire that much later to batch wake-ups), and the last few microseconds a spin. The
// thread is locked for the call: the slack is a thread's setting. hack/bench/link measures what
// this keeps.
func sleepUntil(deadline time.Time, interrupt <-chan struct{}) bool {
	if wait := time.Until(deadline); wait-coarseMargin-wait/500 > 0 {
		wait -= coarseMargin + wait/500
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-interrupt:
			timer.Stop()
			return false
		}
	}
	if rest := time.Until(deadline) - spinMargin; rest > 0 {
		runtime.LockOSThread()
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		ts := unix.NsecToTimespec(rest.Nanoseconds())
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
		runtime.UnlockOSThread()
	}
	for time.Now().Before(deadline) {
		runtime.Gosched()
	}
	return true
}
