// Package poll waits, in tests, for a condition that the system reaches on its own time.
package poll

import (
	"testing"
	"time"
)

// Until calls check every interval until it returns nil, and fails the test with check's last
// error when timeout expires first.
func Until(t testing.TB, timeout, interval time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
		}
		time.Sleep(interval)
	}
}
