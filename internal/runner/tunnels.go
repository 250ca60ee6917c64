package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshtunnel"
)

// tunnelLogs reads the ssh -v logs the tunnel sidecars write into a shared folder
// (runspec.TunnelLogFile); port is the first tunnel's loopback port (0: not probed).
type tunnelLogs struct {
	dir   string
	count int
	port  int
	// generator reads what the load generator's error says.
	generator engine.Generator
}

func (l tunnelLogs) read(i int) (neg *sshtunnel.Negotiated, lastError string) {
	return sshtunnel.ParseLog(l.text(i))
}

func (l tunnelLogs) text(i int) string {
	if l.dir == "" {
		return ""
	}
	b, err := os.ReadFile(runspec.TunnelLogFile(l.dir, i))
	if err != nil {
		return ""
	}
	return string(b)
}

// negotiated returns what the first tunnel negotiated; every tunnel asks for the same.
func (l tunnelLogs) negotiated() *sshtunnel.Negotiated {
	neg, _ := l.read(0)
	return neg
}

// explain turns a failed run into a failure: TunnelDown, naming the tunnel and ssh's last error,
// when a tunnel logged one, so that a dead tunnel never passes for a slow or broken server.
func (l tunnelLogs) explain(i, n int, err error) *FailureError {
	for _, j := range append([]int{i}, allBut(i, l.count)...) {
		if _, last := l.read(j); last != "" {
			return &FailureError{Reason: conditions.ReasonTunnelDown,
				Message: fmt.Sprintf("tunnel %d of %d: %s (%v)", j, l.count, last, err)}
		}
	}
	for j := range l.count {
		// A killed ssh leaves its port closed until the kubelet has started it again, and the
		// new one logs a second session: either shows the tunnel died under pgbench.
		if l.port > 0 && !accepts(fmt.Sprintf("127.0.0.1:%d", l.port+j)) {
			return &FailureError{Reason: conditions.ReasonTunnelDown, Message: fmt.Sprintf("tunnel %d of %d: its ssh is gone "+
				"(127.0.0.1:%d refuses connections): the sidecar died (killed, out of memory or crashed), which closed "+
				"the connections it carried (%v)", j, l.count, l.port+j, err)}
		}
		if sessions := sshtunnel.Sessions(l.text(j)); sessions > 1 {
			return &FailureError{Reason: conditions.ReasonTunnelDown, Message: fmt.Sprintf("tunnel %d of %d: its ssh was started %d times "+
				"during the run: the sidecar died (killed, out of memory or crashed) and the kubelet restarted it, "+
				"which closed the connections it carried (%v)", j, l.count, sessions, err)}
		}
	}
	var fe *FailureError
	if errors.As(err, &fe) {
		return fe
	}
	msg := err.Error()
	if n > 1 {
		msg = fmt.Sprintf("%s on tunnel %d of %d: %s", l.generator.Name(), i, n, msg)
	}
	if l.generator.ConnectionLost(msg) {
		return &FailureError{Reason: conditions.ReasonConnectionLost, Message: "the connection to the server was lost during the run " +
			"(the server restarted, failed over or stopped, or a tunnel or pooler on the path closed it): " + msg}
	}
	return &FailureError{Reason: conditions.ReasonPgbenchError, Message: msg}
}

func allBut(i, n int) []int {
	var out []int
	for j := 0; j < n; j++ {
		if j != i {
			out = append(out, j)
		}
	}
	return out
}

// lockedWriter serializes writes from processes that share one output.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter prefixes every line, so that interleaved pgbench outputs stay readable in the log.
type prefixWriter struct {
	prefix string
	w      io.Writer
	midway bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if p.prefix == "" {
		return p.w.Write(b)
	}
	var out bytes.Buffer
	for _, c := range b {
		if !p.midway {
			out.WriteString(p.prefix)
			p.midway = true
		}
		out.WriteByte(c)
		if c == '\n' {
			p.midway = false
		}
	}
	if _, err := p.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// accepts reports whether something listens on a loopback address.
func accepts(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
