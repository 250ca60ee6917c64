package runner

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/runner/netdev"
)

// wireWindow reads the pod's interface counters (every interface but loopback) at the ends of the
// measured window: what the path put on the network, after its tunnels' encryption and
// compression. The pod's other traffic in the window — the live progress the runner writes to
// the API server every few seconds, the CPU samples of remote parts at the window's ends — is
// counted with it; it is a few kilobytes against the load's megabytes.
type wireWindow struct {
	path  string
	at    time.Time
	start netdev.Counters
	err   error
}

func startWire(path string) *wireWindow {
	w := &wireWindow{path: cmp.Or(path, netdev.Path)}
	w.start, w.err = netdev.Read(w.path)
	w.at = time.Now()
	return w
}

// stop is the window's bytes, nil (said on out) when the counters could not be read.
func (w *wireWindow) stop(out io.Writer) *report.Wire {
	end, err := netdev.Read(w.path)
	if err = cmp.Or(w.err, err); err != nil {
		fmt.Fprintf(out, "tunnelbench-runner: the bytes on the wire are not known: %v\n", err)
		return nil
	}
	d := end.Sub(w.start)
	return &report.Wire{ReceivedBytes: d.ReceivedBytes, SentBytes: d.SentBytes, ReceivedPackets: d.ReceivedPackets,
		SentPackets: d.SentPackets, WindowSeconds: time.Since(w.at).Seconds()}
}
