// Package loopback finds free TCP ports on 127.0.0.1 for the servers and tunnels that tests and
// benchmarks start on this machine.
package loopback

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// FreePort returns a loopback port nothing listens on.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeRange returns the first of n consecutive loopback ports nothing listens on, as the tunnels
// of one runner use (base, base+1, …).
func FreeRange(n int) (int, error) {
	for base := 20000 + time.Now().Nanosecond()%20000; base+n < 65000; base += n {
		if free(base, n) {
			return base, nil
		}
	}
	return 0, fmt.Errorf("no %d consecutive free loopback ports", n)
}

func free(base, n int) bool {
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+i))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}
