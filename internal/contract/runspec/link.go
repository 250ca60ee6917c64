package runspec

import (
	"flag"
	"fmt"
	"strconv"
	"time"
)

// LinkPort is the loopback port of the link proxy in the runner pod: the transport's remote hop
// is dialled there instead of at its far end. Below TunnelBasePort, so that tunnels never clash.
const LinkPort = 14432

// LinkStatsPort is the loopback port on which the link proxy serves its counters (how long it held
// the connections' data), and LinkProbe the name under which the runner reads them at both ends
// of the load (Run.Probes).
const (
	LinkStatsPort = 14433
	LinkProbe     = "link"
)

// The operator's word that an emulated link acting from outside the runner pod is in place: the
// value LinkInjected under LinkInjectedKey in the run's result ConfigMap (Run.AwaitLink).
const (
	LinkInjectedKey = "link"
	LinkInjected    = "injected"
)

// Link is the shape of an emulated link, as the link proxy emulates it and as the runner measures
// it against.
type Link struct {
	RTT           time.Duration
	Jitter        time.Duration
	BitsPerSecond int64
}

// Emulated reports whether the link adds anything.
func (l Link) Emulated() bool { return l.RTT > 0 || l.BitsPerSecond > 0 }

func (l Link) addArgs(a *args, prefix string) {
	a.addDuration(prefix+"rtt", l.RTT)
	a.addDuration(prefix+"jitter", l.Jitter)
	if l.BitsPerSecond != 0 {
		*a = append(*a, "--"+prefix+"bandwidth="+strconv.FormatInt(l.BitsPerSecond, 10))
	}
}

func (l *Link) bindFlags(fs *flag.FlagSet, prefix, what string) {
	fs.DurationVar(&l.RTT, prefix+"rtt", 0, what+": round-trip time")
	fs.DurationVar(&l.Jitter, prefix+"jitter", 0, what+": jitter of the round trip (±)")
	fs.Int64Var(&l.BitsPerSecond, prefix+"bandwidth", 0, what+": bits per second in each direction (0: unlimited)")
}

func (l Link) problems(prefix string) []string {
	var errs []string
	if l.RTT < 0 || l.Jitter < 0 || l.BitsPerSecond < 0 {
		errs = append(errs, fmt.Sprintf("--%srtt, --%sjitter and --%sbandwidth must not be negative", prefix, prefix, prefix))
	}
	if l.Jitter > l.RTT {
		errs = append(errs, fmt.Sprintf("--%sjitter must not exceed --%srtt", prefix, prefix))
	}
	return errs
}

// LinkProxy is the contract of `tunnelbench-runner link`: the link proxy, a native sidecar of the
// runner pod, listening on Listen and forwarding every connection to Upstream across Link.
type LinkProxy struct {
	Listen   string
	Upstream string
	Link     Link
	// Stats is where it serves its counters (link.HeldText), "" for nowhere.
	Stats string
}

// Args renders the proxy as the flags of `tunnelbench-runner link`.
func (p LinkProxy) Args() []string {
	var a args
	a.addString("listen", p.Listen)
	a.addString("upstream", p.Upstream)
	a.addString("stats", p.Stats)
	p.Link.addArgs(&a, "")
	return a
}

// BindLinkProxyFlags declares on fs the flags LinkProxy.Args renders; the returned function
// validates and returns the proxy once fs is parsed.
func BindLinkProxyFlags(fs *flag.FlagSet) func() (LinkProxy, error) {
	var p LinkProxy
	fs.StringVar(&p.Listen, "listen", "", "host:port to listen on")
	fs.StringVar(&p.Upstream, "upstream", "", "host:port every connection is forwarded to")
	fs.StringVar(&p.Stats, "stats", "", "host:port to serve the link's counters on (\"\": none)")
	p.Link.bindFlags(fs, "", "the emulated link")
	return func() (LinkProxy, error) {
		errs := p.Link.problems("")
		if p.Listen == "" || p.Upstream == "" {
			errs = append(errs, "--listen and --upstream are required")
		}
		if fs.NArg() > 0 {
			errs = append(errs, fmt.Sprintf("unexpected arguments %q", fs.Args()))
		}
		if len(errs) > 0 {
			return LinkProxy{}, fmt.Errorf("invalid link proxy: %v", errs)
		}
		return p, nil
	}
}

// LinkHeldText is how long the link proxy held its connections' data, as its counters page
// (LinkStatsPort) serves it; ParseLinkHeld reads it back.
func LinkHeldText(held time.Duration) string {
	return fmt.Sprintf("held_nanoseconds %d\n", held.Nanoseconds())
}

// ParseLinkHeld reads LinkHeldText.
func ParseLinkHeld(text string) (time.Duration, error) {
	var n int64
	if _, err := fmt.Sscanf(text, "held_nanoseconds %d", &n); err != nil || n < 0 {
		if len(text) > 64 {
			text = text[:64] + "…"
		}
		return 0, fmt.Errorf("not a link's counters: %q", text)
	}
	return time.Duration(n), nil
}
