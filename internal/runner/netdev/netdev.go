// Package netdev reads a network namespace's interface counters from /proc/net/dev: inside a pod
// that is the pod's own namespace, shared by its containers, so the bytes that crossed the pod's
// interfaces during a window — what the path put on the network, after a tunnel's encryption and
// compression — are the difference of two reads, with no privilege.
package netdev

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Path is where a process reads its network namespace's counters.
const Path = "/proc/net/dev"

// Counters are the bytes and packets received and sent by every interface but loopback (which
// carries what the pod's containers say to each other: pgbench to its tunnel, the tunnel to the
// link proxy).
type Counters struct {
	ReceivedBytes, SentBytes     uint64
	ReceivedPackets, SentPackets uint64
}

// Sub is what was counted between earlier and c.
func (c Counters) Sub(earlier Counters) Counters {
	return Counters{ReceivedBytes: c.ReceivedBytes - earlier.ReceivedBytes, SentBytes: c.SentBytes - earlier.SentBytes,
		ReceivedPackets: c.ReceivedPackets - earlier.ReceivedPackets, SentPackets: c.SentPackets - earlier.SentPackets}
}

// Read sums the counters of path's interfaces but lo. Its format: two header lines, then
// "iface: rx_bytes rx_packets errs drop fifo frame compressed multicast tx_bytes tx_packets …".
func Read(path string) (Counters, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Counters{}, err
	}
	var c Counters
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 0; sc.Scan(); line++ {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if line < 2 {
			continue
		}
		fields := strings.Fields(rest)
		if !ok || len(fields) < 10 {
			return Counters{}, fmt.Errorf("%s: %q is not an interface's counters", path, sc.Text())
		}
		if strings.TrimSpace(name) == "lo" {
			continue
		}
		var n [4]uint64
		for i, f := range []int{0, 1, 8, 9} {
			if n[i], err = strconv.ParseUint(fields[f], 10, 64); err != nil {
				return Counters{}, fmt.Errorf("%s: %q: %w", path, sc.Text(), err)
			}
		}
		c.ReceivedBytes += n[0]
		c.ReceivedPackets += n[1]
		c.SentBytes += n[2]
		c.SentPackets += n[3]
	}
	return c, sc.Err()
}
