package v1alpha1

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// DefaultEmulator emulates a link when spec.network does not say how.
const DefaultEmulator = EmulatorUserspace

// Link is an emulated link in Go's units, parsed from a NetworkSpec.
type Link struct {
	Emulator      NetworkEmulator
	RTT           time.Duration
	Jitter        time.Duration
	BitsPerSecond int64
}

// Emulated reports whether the link changes anything.
func (l Link) Emulated() bool { return l.RTT > 0 || l.BitsPerSecond > 0 }

// Figures are the link's asked figures as the status records them.
func (l Link) Figures() LinkFigures {
	return LinkFigures{RTTMs: millis(l.RTT), JitterMs: millis(l.Jitter), BitsPerSecond: l.BitsPerSecond}
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// NetworkFor is the link of transport t: its own network when set (`{}` is none), else
// spec.network. The schema validated it; a bandwidth it would have refused is an error.
func (tb *TunnelBenchmark) NetworkFor(t TransportSpec) (Link, error) {
	n := tb.Spec.Network
	if t.Network != nil {
		n = t.Network
	}
	if n == nil {
		return Link{}, nil
	}
	l := Link{Emulator: n.Emulator}
	if l.Emulator == "" {
		l.Emulator = DefaultEmulator
	}
	if n.RTT != nil {
		l.RTT = n.RTT.Duration
	}
	if n.Jitter != nil {
		l.Jitter = n.Jitter.Duration
	}
	if n.Bandwidth != "" {
		bps, err := ParseBandwidth(n.Bandwidth)
		if err != nil {
			return Link{}, err
		}
		l.BitsPerSecond = bps
	}
	return l, nil
}

var bandwidthPattern = regexp.MustCompile(`^([1-9][0-9]*)(Kbit|Mbit|Gbit)$`)

// bandwidthUnits are network.bandwidth's units in bits per second: powers of 1000, as tc's.
var bandwidthUnits = map[string]int64{"Kbit": 1_000, "Mbit": 1_000_000, "Gbit": 1_000_000_000}

// ParseBandwidth reads network.bandwidth ("50Mbit") as bits per second.
func ParseBandwidth(s string) (int64, error) {
	m := bandwidthPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("network.bandwidth %q: want a whole number with a unit Kbit, Mbit or Gbit, e.g. 50Mbit", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > 10_000_000 {
		return 0, fmt.Errorf("network.bandwidth %q is out of range", s)
	}
	return n * bandwidthUnits[m[2]], nil
}
