// Package link emulates a network link in user space: a TCP proxy, built on Toxiproxy used as a
// library, through which one hop of a benchmark's path passes. It adds what Toxiproxy's own
// toxics lack, as custom toxics:
//
//   - latency with microsecond resolution, half the RTT in each direction, applied before the
//     bandwidth limit (Toxiproxy's bandwidth toxic keeps each chunk's timestamp, so a latency
//     toxic after it would absorb the serialization delay), with uniform jitter;
//   - one bandwidth budget per direction shared by every connection through the proxy (a token
//     bucket): Toxiproxy's bandwidth toxic limits each connection on its own, a real link is
//     shared by all of them, tunnels included;
//   - TCP's handshake on each new connection: nothing leaves the client before one RTT, nor the
//     server before one and a half, as a proxy's local accept would otherwise hide it.
//
// Packet loss is out of scope: a TCP proxy sees a byte stream, never packets.
package link

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Link is an emulated link's shape.
type Link struct {
	// RTT is the round-trip time the link adds: half of it in each direction.
	RTT time.Duration
	// Jitter varies each direction's delay uniformly by up to ±Jitter/2, so that the round trip
	// varies by up to ±Jitter. At most RTT.
	Jitter time.Duration
	// BitsPerSecond is the link's capacity in each direction, shared by every connection; 0 is
	// unlimited.
	BitsPerSecond int64
}

// MinRTT is the smallest RTT offered: Go's timers and scheduler do not keep sub-millisecond
// sleeps, so a smaller one would be emulated as about a millisecond anyway.
const MinRTT = time.Millisecond

// Validate reports a link the proxy cannot emulate faithfully.
func (l Link) Validate() error {
	var errs []string
	if l.RTT != 0 && l.RTT < MinRTT {
		errs = append(errs, fmt.Sprintf("an RTT of %s is below the %s this emulator can keep", l.RTT, MinRTT))
	}
	if l.Jitter < 0 || l.Jitter > l.RTT {
		errs = append(errs, fmt.Sprintf("jitter %s must be between 0 and the RTT (%s)", l.Jitter, l.RTT))
	}
	if l.BitsPerSecond < 0 {
		errs = append(errs, "bandwidth must not be negative")
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid link: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Proxy is a running link emulator.
type Proxy struct {
	p      *toxiproxy.Proxy
	delays []*delayToxic
}

// Start listens on listen ("127.0.0.1:0" picks a port) and forwards every connection to upstream
// across the link.
func Start(listen, upstream string, l Link) (*Proxy, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	logger := zerolog.Nop()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), logger)
	p := toxiproxy.NewProxy(server, "link", listen, upstream)
	out := &Proxy{p: p}
	for _, t := range l.toxics() {
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		w, err := p.Toxics.AddToxicJson(strings.NewReader(string(b)))
		if err != nil {
			return nil, fmt.Errorf("cannot add the %s toxic: %w", t.Type, err)
		}
		if d, ok := w.Toxic.(*delayToxic); ok {
			out.delays = append(out.delays, d)
		}
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", listen, err)
	}
	return out, nil
}

// Held is how long the link has held its connections' data by its delay, in both directions:
// for each connection and direction, the time in which at least one of its chunks was held,
// summed (delayToxic). The link's counters page serves it (runspec.LinkHeldText).
func (p *Proxy) Held() time.Duration {
	var sum time.Duration
	for _, d := range p.delays {
		sum += time.Duration(d.held.Load())
	}
	return sum
}

// AwaitUpstream dials upstream every interval until it accepts a connection or ctx ends, and says
// how long that took. The proxy dials upstream once per connection and drops the connection when
// that fails, so the sidecar waits here before it serves: a NetworkPolicy implementation may
// refuse a new pod's first connections (it admits the pod's address once it has seen it), and a
// tunnel's ssh would see its connection closed, not refused, and give up.
func AwaitUpstream(ctx context.Context, upstream string, interval time.Duration) (time.Duration, error) {
	start := time.Now()
	var d net.Dialer
	for {
		dialCtx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := d.DialContext(dialCtx, "tcp", upstream)
		cancel()
		if err == nil {
			_ = conn.Close()
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return time.Since(start), fmt.Errorf("%s accepted no connection for %s: %w", upstream,
				time.Since(start).Round(time.Second), err)
		case <-time.After(interval):
		}
	}
}

// Addr is where the proxy listens.
func (p *Proxy) Addr() string { return p.p.Listen }

// Stop closes the listener and every connection.
func (p *Proxy) Stop() { p.p.Stop() }

// toxicSpec is a toxic as Toxiproxy's collection reads it.
type toxicSpec struct {
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Stream     string  `json:"stream"`
	Toxicity   float32 `json:"toxicity"`
	Attributes any     `json:"attributes"`
}

// toxics are the link's toxics, in the order each direction's chunks pass them: the handshake,
// then the delay, then the bandwidth limit.
func (l Link) toxics() []toxicSpec {
	var out []toxicSpec
	for _, dir := range []string{"upstream", "downstream"} {
		add := func(typ string, attrs any) {
			out = append(out, toxicSpec{Name: typ + "_" + dir, Type: typ, Stream: dir, Toxicity: 1, Attributes: attrs})
		}
		if l.RTT > 0 {
			handshake := l.RTT
			if dir == "downstream" {
				handshake += l.RTT / 2
			}
			add(handshakeType, handshakeToxic{DelayNanos: int64(handshake)})
			add(delayType, delayToxic{DelayNanos: int64(l.RTT / 2), JitterNanos: int64(l.Jitter / 2)})
		}
		if l.BitsPerSecond > 0 {
			add(bandwidthType, &bandwidthToxic{BytesPerSecond: l.BitsPerSecond / 8})
		}
	}
	return out
}
