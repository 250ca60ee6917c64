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

// measureLink measures the path the load takes: the median connection time, the median RTT of
// `select 1` on one connection and, when a bandwidth is asked, the throughput of a COPY of random
// data generated on the server. Each statement stands alone (no temporary table, no transaction),
// so that the measure also holds through a transaction pooler.
func measureLink(ctx context.Context, cfg *pgx.ConnConfig, asked runspec.Link) (*report.Link, error) {
	fail := func(what string, err error) error {
		return &FailureError{Reason: conditions.ReasonPgbenchError, Message: fmt.Sprintf("measuring the link: %s: %v", what, err)}
	}
	var connects []float64
	var conn *pgx.Conn
	for i := range linkConnects {
		start := time.Now()
		c, err := connect(ctx, cfg)
		if err != nil {
			return nil, fail("connect", err)
		}
		connects = append(connects, millisSince(start))
		if i < linkConnects-1 {
			_ = c.Close(ctx)
		} else {
			conn = c
		}
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	var trips []float64
	for range linkRoundTrips {
		start := time.Now()
		if _, err := conn.Exec(ctx, "select 1"); err != nil {
			return nil, fail("select 1", err)
		}
		trips = append(trips, millisSince(start))
	}
	out := &report.Link{RTTMs: stats.Median(trips), ConnectMs: stats.Median(connects)}
	if asked.BitsPerSecond > 0 {
		bps, err := copyThroughput(ctx, conn, copyBytes(asked.BitsPerSecond))
		if err != nil {
			return nil, fail("COPY", err)
		}
		out.BitsPerSecond = bps
	}
	return out, nil
}

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

// copyThroughput runs the COPY and returns the bits per second from its first byte to its last.
func copyThroughput(ctx context.Context, conn *pgx.Conn, size int64) (int64, error) {
	w := &timedCounter{}
	if _, err := conn.PgConn().CopyTo(ctx, w, copyQuery(size)); err != nil {
		return 0, err
	}
	elapsed := w.last.Sub(w.first).Seconds()
	if elapsed <= 0 {
		return 0, fmt.Errorf("the COPY of %d bytes arrived in one piece: nothing to time", w.bytes)
	}
	return int64(float64(w.bytes-w.firstBytes) * 8 / elapsed), nil
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

var _ io.Writer = (*timedCounter)(nil)

func millisSince(t time.Time) float64 { return float64(time.Since(t)) / float64(time.Millisecond) }
