package link

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"golang.org/x/time/rate"
)

// Toxic types, registered with Toxiproxy under names its own toxics do not use.
const (
	delayType     = "tunnelbench_delay"
	bandwidthType = "tunnelbench_shared_bandwidth"
	handshakeType = "tunnelbench_handshake"
)

func init() {
	toxics.Register(delayType, new(delayToxic))
	toxics.Register(bandwidthType, new(bandwidthToxic))
	toxics.Register(handshakeType, new(handshakeToxic))
}

// chunkBuffer is how many chunks may wait in a toxic's input: enough for the delay's pipeline
// (chunks in flight for half an RTT) not to hold the reader back.
const chunkBuffer = 1024

// hold waits until deliver, or returns false when the toxic is interrupted first.
//
// Go's netpoller sleeps in whole milliseconds (epoll_wait's timeout, truncated), then sleeps 1 ms
// more for a remainder below a millisecond: a timer due in 2.4 ms fires at about 3 ms, always
// late, by half a millisecond on average. Waits are therefore rounded to the nearest whole
// millisecond, which the netpoller keeps: each delay is off by at most ±0.5 ms, and the errors of
// a round trip's two halves average out instead of adding up (hack/bench/link measures it).
func hold(stub *toxics.ToxicStub, deliver time.Time) bool {
	wait := time.Until(deliver)
	if wait >= time.Millisecond {
		wait = wait.Round(time.Millisecond)
	}
	if wait <= 0 {
		return true
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-stub.Interrupt:
		return false
	}
}

// pipe runs each chunk through pass until the link closes or the toxic is interrupted; pass
// returns false when it was interrupted after forwarding what it had.
func pipe(stub *toxics.ToxicStub, pass func(*stream.StreamChunk) bool) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if !pass(c) {
				return
			}
		}
	}
}

// delayToxic delays every chunk by DelayNanos ± JitterNanos from when it was read: a pipeline, so
// chunks in flight overlap as on a real link; order is kept, so a chunk whose jitter is shorter
// than its predecessor's leaves right after it, as TCP would deliver it.
type delayToxic struct {
	DelayNanos  int64 `json:"delayNanos"`
	JitterNanos int64 `json:"jitterNanos"`
}

func (t *delayToxic) GetBufferSize() int { return chunkBuffer }

func (t *delayToxic) Pipe(stub *toxics.ToxicStub) {
	pipe(stub, func(c *stream.StreamChunk) bool {
		d := t.DelayNanos
		if t.JitterNanos > 0 {
			d += rand.Int64N(2*t.JitterNanos+1) - t.JitterNanos
		}
		deliver := c.Timestamp.Add(time.Duration(d))
		ok := hold(stub, deliver)
		// Later toxics count from when the chunk left the link's far end.
		c.Timestamp = deliver
		stub.Output <- c
		return ok
	})
}

// handshakeToxic holds a new connection's early chunks as TCP's handshake would: nothing leaves
// the client before the handshake's RTT is over (connect returns after SYN, SYN-ACK), and nothing
// leaves the server before the client's ACK reached it, half an RTT later. The delay toxic after
// it adds each direction's half RTT. A client-first protocol (PostgreSQL) then sees its first
// reply two RTTs after connecting, and a server-first one (ssh's banner) too, as over real TCP; a
// proxy's local accept would otherwise hide the handshake.
type handshakeToxic struct {
	// DelayNanos is how long after the connection opened this direction may send: the RTT
	// upstream, one and a half downstream.
	DelayNanos int64 `json:"delayNanos"`
}

func (t *handshakeToxic) GetBufferSize() int { return chunkBuffer }

// NewState is each connection's own state, made when the proxy accepts it: when it opened.
func (t *handshakeToxic) NewState() any { return &handshakeState{opened: time.Now()} }

type handshakeState struct{ opened time.Time }

func (t *handshakeToxic) Pipe(stub *toxics.ToxicStub) {
	state := stub.State.(*handshakeState)
	ready := state.opened.Add(time.Duration(t.DelayNanos))
	pipe(stub, func(c *stream.StreamChunk) bool {
		ok := true
		if c.Timestamp.Before(ready) {
			ok = hold(stub, ready)
			c.Timestamp = ready
		}
		stub.Output <- c
		return ok
	})
}

// bandwidthToxic passes BytesPerSecond through one token bucket that every connection of the
// proxy shares (the same toxic serves all of a proxy's connections in one direction), splitting
// chunks so that none exceeds the bucket's burst.
type bandwidthToxic struct {
	BytesPerSecond int64 `json:"bytesPerSecond"`

	once    sync.Once
	limiter *rate.Limiter
	burst   int
}

func (t *bandwidthToxic) GetBufferSize() int { return chunkBuffer }

// burstFor is the bucket's depth: 2 ms at the rate, and at least one 16 KiB read, so that a
// chunk passes in few pieces and the rate holds over any few milliseconds.
func burstFor(bytesPerSecond int64) int {
	return int(max(bytesPerSecond/500, 16<<10))
}

func (t *bandwidthToxic) Pipe(stub *toxics.ToxicStub) {
	t.once.Do(func() {
		t.burst = burstFor(t.BytesPerSecond)
		t.limiter = rate.NewLimiter(rate.Limit(t.BytesPerSecond), t.burst)
	})
	pipe(stub, func(c *stream.StreamChunk) bool {
		for data := c.Data; len(data) > 0; {
			n := min(len(data), t.burst)
			r := t.limiter.ReserveN(time.Now(), n)
			if !hold(stub, time.Now().Add(r.Delay())) {
				stub.Output <- &stream.StreamChunk{Data: data, Timestamp: c.Timestamp}
				return false
			}
			stub.Output <- &stream.StreamChunk{Data: data[:n], Timestamp: c.Timestamp}
			data = data[n:]
		}
		return true
	})
}
