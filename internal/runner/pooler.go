package runner

import (
	"context"
	"fmt"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/pgbouncer"
	"github.com/tunnelbench/tunnelbench/internal/report"
)

// poolerCounter brackets the pgbench run with snapshots of the pooler's admin console, whose
// difference is the evidence that the run's transactions went through the pooler.
type poolerCounter struct {
	kind   string
	sess   *session
	before *pgbouncer.Snapshot
}

// startCounting takes the first snapshot; it does nothing without a pooler.
func startCounting(ctx context.Context, kind string, sess *session) (*poolerCounter, error) {
	c := &poolerCounter{kind: kind, sess: sess}
	if kind != PoolerPgBouncer {
		return c, nil
	}
	before, err := pgbouncer.Observe(ctx, sess.config)
	if err != nil {
		return nil, &FailureError{Reason: benchv1.ReasonConnectionRejected, Message: err.Error()}
	}
	c.before = before
	return c, nil
}

// stop takes the second snapshot and reports the pooler's side of the run; nil without a pooler.
func (c *poolerCounter) stop(ctx context.Context) (*report.Pooler, error) {
	if c.kind == "" {
		return nil, nil
	}
	out := &report.Pooler{ClientTLS: c.sess.clientTLS}
	if c.before == nil {
		return out, nil
	}
	after, err := pgbouncer.Observe(ctx, c.sess.config)
	if err != nil {
		return nil, fmt.Errorf("after the run: %w", err)
	}
	out.Counted = true
	out.Transactions = after.Transactions - c.before.Transactions
	out.ServerConnections = after.ServerConnections
	out.ServerTLS = after.ServerTLS
	return out, nil
}
