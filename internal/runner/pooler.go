package runner

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/evidence"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/mysqlpool"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/pgbouncer"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/pgbouncer/console"
)

// poolerCounter brackets the load with snapshots of the pooler's counters (PgBouncer's admin
// console or exporters, the MySQL pooler's JSON), whose difference is the evidence that the run's transactions went through the pooler.
type poolerCounter struct {
	kind    runspec.PoolerKind
	sess    *session
	observe func(context.Context) (*evidence.Snapshot, error)
	before  *evidence.Snapshot
	part    string // the pooler's part of the path (runspec.Run.PoolerPart)
}

// startCounting takes the first snapshot; it does nothing without a pooler, or for an opaque one
// without exporters.
func startCounting(ctx context.Context, kind runspec.PoolerKind, metrics, part string, sess *session) (*poolerCounter, error) {
	c := &poolerCounter{kind: kind, sess: sess, part: part}
	switch {
	case kind == runspec.PoolerPgBouncer:
		c.observe = func(ctx context.Context) (*evidence.Snapshot, error) { return console.Observe(ctx, sess.config) }
	case kind == runspec.PoolerMySQL:
		c.observe = func(ctx context.Context) (*evidence.Snapshot, error) { return mysqlpool.Observe(ctx, metrics) }
	case kind == runspec.PoolerOpaque && metrics != "":
		host, port, err := splitHostPort(metrics)
		if err != nil {
			return nil, err
		}
		c.observe = func(ctx context.Context) (*evidence.Snapshot, error) {
			return pgbouncer.ObserveExporter(ctx, host, port)
		}
	default:
		return c, nil
	}
	before, err := c.observe(ctx)
	if err != nil {
		return nil, &FailureError{Reason: conditions.ReasonConnectionRejected, Message: err.Error()}
	}
	c.before = before
	return c, nil
}

// stop takes the second snapshot and reports the pooler's side of the run; nil without a pooler.
func (c *poolerCounter) stop(ctx context.Context) (*report.Pooler, error) {
	if c.kind == "" {
		return nil, nil
	}
	out := &report.Pooler{ClientTLS: c.sess.clientTLS, Part: c.part}
	if c.before == nil {
		return out, nil
	}
	after, err := c.observe(ctx)
	if err != nil {
		return nil, fmt.Errorf("after the run: %w", err)
	}
	out.Counted = true
	out.Transactions = after.Transactions - c.before.Transactions
	if c.before.WaitCounted && after.WaitCounted {
		out.WaitCounted, out.WaitSeconds = true, float64(after.WaitMicros-c.before.WaitMicros)/1e6
	}
	out.ServerConnections = after.ServerConnections
	out.ServerTLS = after.ServerTLS
	out.Version = after.Version
	return out, nil
}

func splitHostPort(s string) (string, int, error) {
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("--pooler-metrics %q: %w", s, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return "", 0, fmt.Errorf("--pooler-metrics %q: the port is not a number", s)
	}
	return host, port, nil
}
