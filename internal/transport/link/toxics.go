package link

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
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
func hold(stub *toxics.ToxicStub, deliver time.Time) bool {
	return sleepUntil(deliver, stub.Interrupt)
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
//
// It counts how long it held each connection's data: the union of the stretches in which at least
// one chunk of the connection was held in its direction, summed over the connections. By Little's
// law that is the link's share of the transactions' time (internal/analysis/budget): a
// connection carrying one transaction at a time (pgbench's, a pooler's) holds it for the delay of
// each of its round trips; one that multiplexes several (an SSH tunnel) is counted once for all
// of them.
type delayToxic struct {
	DelayNanos  int64 `json:"delayNanos"`
	JitterNanos int64 `json:"jitterNanos"`

	held atomic.Int64 // nanoseconds
}

func (t *delayToxic) GetBufferSize() int { return chunkBuffer }

func (t *delayToxic) Pipe(stub *toxics.ToxicStub) {
	var heldUntil time.Time // this connection's, in this direction
	pipe(stub, func(c *stream.StreamChunk) bool {
		d := t.DelayNanos
		if t.JitterNanos > 0 {
			d += rand.Int64N(2*t.JitterNanos+1) - t.JitterNanos
		}
		deliver := c.Timestamp.Add(time.Duration(d))
		if from := later(c.Timestamp, heldUntil); deliver.After(from) {
			t.held.Add(int64(deliver.Sub(from)))
			heldUntil = deliver
		}
		ok := hold(stub, deliver)
		// Later toxics count from when the chunk left the link's far end.
		c.Timestamp = deliver
		stub.Output <- c
		return ok
	})
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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

// bandwidthToxic is a line of BytesPerSecond that every connection of the proxy shares in one
// direction (the same toxic serves all of them), sending one packet at a time as a store-and-forward
// link does: a packet of n bytes leaves n/rate after the line was free and the packet had reached
// it. Chunks are cut into packets of at most packetBytes, so a large write streams out as on a
// real link, and a single small message pays its own serialization time — which a token bucket's
// burst would let it skip (16 KiB of burst is 1.3 s of a 100 Kbit/s line). A packet may leave up
// to earlyRelease before its time, so that a fast line is not held by a sleep per packet; the line's
// clock keeps the exact time, so no error accumulates.
type bandwidthToxic struct {
	BytesPerSecond int64 `json:"bytesPerSecond"`

	mu   sync.Mutex
	free time.Time
}

// packetBytes is a TCP segment's payload on a 1500-byte MTU with timestamps.
const packetBytes = 1448

// earlyRelease is how much before its departure a packet may leave without a wait: 0.2 ms, a
// few hundred bytes at 10 Mbit/s, 25 KB at 1 Gbit/s.
const earlyRelease = 200 * time.Microsecond

func (t *bandwidthToxic) GetBufferSize() int { return chunkBuffer }

// depart books n bytes that reached the line at arrived and says when they leave it.
func (t *bandwidthToxic) depart(n int, arrived time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if arrived.After(t.free) {
		t.free = arrived
	}
	t.free = t.free.Add(time.Duration(float64(n) * float64(time.Second) / float64(t.BytesPerSecond)))
	return t.free
}

func (t *bandwidthToxic) Pipe(stub *toxics.ToxicStub) {
	pipe(stub, func(c *stream.StreamChunk) bool {
		for data := c.Data; len(data) > 0; {
			n := min(len(data), packetBytes)
			leave := t.depart(n, c.Timestamp)
			if time.Until(leave) > earlyRelease && !hold(stub, leave) {
				stub.Output <- &stream.StreamChunk{Data: data, Timestamp: leave}
				return false
			}
			stub.Output <- &stream.StreamChunk{Data: data[:n], Timestamp: leave}
			data = data[n:]
		}
		return true
	})
}
