package runner

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// How the path is measured before the load.
const (
	// linkRoundTrips is how many `select 1` round trips the RTT is the median of.
	linkRoundTrips = 40
	// linkConnects is how many connections the connection time is the median of.
	linkConnects = 5
	// copySeconds is how long the bandwidth COPY should last at the asked bandwidth: long enough
	// for the token bucket's burst and TCP's slow start to fade.
	copySeconds = 2
	// minCopyBytes and maxCopyBytes bound the COPY.
	minCopyBytes = 1 << 20
	maxCopyBytes = 256 << 20
	// copyBlockBytes is the random block the server generates once and repeats: further apart than
	// zlib's 32 KiB window, so that an ssh tunnel's compression gains nothing on it.
	copyBlockBytes = 1 << 20
)

// pathProbe opens connections of the run's engine for the runner's own measure of the path
// (measureLink), configured as the preflight connected.
type pathProbe interface {
	open(ctx context.Context) (probeConn, error)
}

// probeStatement is what probeConn.roundTrip sends.
const probeStatement = "SELECT 1"

// probeConn is one connection of a pathProbe.
type probeConn interface {
	// roundTrip sends the smallest statement (probeStatement) and waits for its answer.
	roundTrip(ctx context.Context) error
	// receive has the server send about size bytes of random data, each read counted into w.
	receive(ctx context.Context, size int64, w *timedCounter) error
	close(ctx context.Context)
}

// measureLink measures the path the load takes: the median connection time, the median RTT of
// the smallest statement on one connection and, when a bandwidth is asked, the throughput of
// random data generated on the server. Each statement stands alone (no temporary table, no
// transaction), so that the measure also holds through a transaction pooler.
func measureLink(ctx context.Context, probe pathProbe, asked runspec.Link) (*report.Link, error) {
	fail := func(what string, err error) error {
		return &FailureError{Reason: conditions.ReasonPgbenchError, Message: fmt.Sprintf("measuring the link: %s: %v", what, err)}
	}
	var connects []float64
	var conn probeConn
	for i := range linkConnects {
		start := time.Now()
		c, err := probe.open(ctx)
		if err != nil {
			return nil, fail("connect", err)
		}
		connects = append(connects, millisSince(start))
		if i < linkConnects-1 {
			c.close(ctx)
		} else {
			conn = c
		}
	}
	defer conn.close(context.WithoutCancel(ctx))
	var trips []float64
	for range linkRoundTrips {
		start := time.Now()
		if err := conn.roundTrip(ctx); err != nil {
			return nil, fail(probeStatement, err)
		}
		trips = append(trips, millisSince(start))
	}
	out := &report.Link{RTTMs: stats.Median(trips), ConnectMs: stats.Median(connects)}
	if asked.BitsPerSecond > 0 {
		size := copyBytes(asked.BitsPerSecond)
		w := &timedCounter{}
		if err := conn.receive(ctx, size, w); err != nil {
			return nil, fail("random data", err)
		}
		bps, err := w.bitsPerSecond()
		if err != nil {
			return nil, fail("random data", err)
		}
		out.BitsPerSecond = bps
	}
	return out, nil
}

// pgProbe opens PostgreSQL connections.
type pgProbe struct{ config *pgx.ConnConfig }

func (p pgProbe) open(ctx context.Context) (probeConn, error) {
	c, err := connect(ctx, p.config)
	if err != nil {
		return nil, err
	}
	return pgProbeConn{c}, nil
}

type pgProbeConn struct{ conn *pgx.Conn }

func (c pgProbeConn) roundTrip(ctx context.Context) error {
	_, err := c.conn.Exec(ctx, probeStatement)
	return err
}

// receive is a binary COPY of the random data (copyQuery).
func (c pgProbeConn) receive(ctx context.Context, size int64, w *timedCounter) error {
	_, err := c.conn.PgConn().CopyTo(ctx, w, copyQuery(size))
	return err
}

func (c pgProbeConn) close(ctx context.Context) { _ = c.conn.Close(ctx) }

// copyBytes is the COPY's size at bitsPerSecond: copySeconds of it, within bounds.
func copyBytes(bitsPerSecond int64) int64 {
	return min(max(bitsPerSecond/8*copySeconds, minCopyBytes), maxCopyBytes)
}

// copyQuery is a binary COPY of about size bytes of random data: a block of md5 digests of
// random() (generated once, materialized) repeated. The server's cost is the block's generation,
// which the timing leaves out (it counts from the first byte).
func copyQuery(size int64) string {
	blocks := max(size/copyBlockBytes, 1)
	return fmt.Sprintf(`COPY (WITH block AS MATERIALIZED (
		SELECT decode(string_agg(md5(random()::text), ''), 'hex') AS b FROM generate_series(0, %d) g GROUP BY g / 256)
		SELECT b FROM block, generate_series(1, %d)) TO STDOUT (FORMAT binary)`, copyBlockBytes/16-1, blocks)
}

// timedCounter counts what it is written and when: the first write's bytes left out, as they
// only started the clock.
type timedCounter struct {
	bytes, firstBytes int64
	first, last       time.Time
}

func (w *timedCounter) Write(p []byte) (int, error) {
	now := time.Now()
	if w.first.IsZero() {
		w.first, w.firstBytes = now, int64(len(p))
	}
	w.last = now
	w.bytes += int64(len(p))
	return len(p), nil
}

// bitsPerSecond is the rate from the first write to the last.
func (w *timedCounter) bitsPerSecond() (int64, error) {
	elapsed := w.last.Sub(w.first).Seconds()
	if elapsed <= 0 {
		return 0, fmt.Errorf("the %d bytes arrived in one piece: nothing to time", w.bytes)
	}
	return int64(float64(w.bytes-w.firstBytes) * 8 / elapsed), nil
}

var _ io.Writer = (*timedCounter)(nil)

func millisSince(t time.Time) float64 { return float64(time.Since(t)) / float64(time.Millisecond) }
