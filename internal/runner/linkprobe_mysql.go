package runner

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// randomRowBytes is what one row of randomRowsQuery carries: RANDOM_BYTES' largest.
const randomRowBytes = 1024

// mysqlProbe opens MySQL-protocol connections with the preflight's configuration.
type mysqlProbe struct{ config *mysql.Config }

func (p mysqlProbe) open(ctx context.Context) (probeConn, error) {
	connector, err := mysql.NewConnector(p.config)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	cctx, cancel := context.WithTimeout(ctx, p.config.Timeout)
	defer cancel()
	// A new pool's first connection: the dial, the handshake and the login, timed by the caller.
	c, err := db.Conn(cctx)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return mysqlProbeConn{db: db, conn: c}, nil
}

type mysqlProbeConn struct {
	db   *sql.DB
	conn *sql.Conn
}

func (c mysqlProbeConn) roundTrip(ctx context.Context) error {
	var one int
	return c.conn.QueryRowContext(ctx, probeStatement).Scan(&one)
}

// receive reads randomRowsQuery's rows as they arrive, counting their bytes (the protocol's
// framing, 4 bytes of packet header and a length a row, under 1 %, left out).
func (c mysqlProbeConn) receive(ctx context.Context, size int64, w *timedCounter) error {
	rows, err := c.conn.QueryContext(ctx, randomRowsQuery(size))
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var b sql.RawBytes
		if err := rows.Scan(&b); err != nil {
			return err
		}
		_, _ = w.Write(b)
	}
	return rows.Err()
}

func (c mysqlProbeConn) close(context.Context) {
	_ = c.conn.Close()
	_ = c.db.Close()
}

// randomRowsQuery asks for about size bytes of random data in rows of randomRowBytes. The server
// draws each row as it sends it (RANDOM_BYTES: MySQL 5.6, MariaDB 10.10), far faster than any
// emulated link, and random bytes give an ssh tunnel's zlib nothing to compress. The rows come
// from a cross join of a 16-row table (16^5 rows, more than the largest size needs), not from a
// recursive query, whose depth MySQL bounds at 1,000 (cte_max_recursion_depth).
func randomRowsQuery(size int64) string {
	values := make([]string, 16)
	for i := range values {
		values[i] = fmt.Sprintf("SELECT %d AS n", i)
	}
	sixteen := "(" + strings.Join(values, " UNION ALL ") + ")"
	from := make([]string, 5)
	for i := range from {
		from[i] = fmt.Sprintf("%s t%d", sixteen, i)
	}
	return fmt.Sprintf("SELECT RANDOM_BYTES(%d) FROM %s LIMIT %d", randomRowBytes, strings.Join(from, ", "),
		max(size/randomRowBytes, 1))
}
