package history

import (
	"context"
	"time"

	"github.com/go-logr/logr"
)

// MinPerSeries is the least Retention.MaxPerSeries keeps: a schedule's largest regression window
// (100) reads its newest 3 × 100 + 1 benchmarks.
const MinPerSeries = 301

// Pruner enforces a Retention on the store while the operator leads: at start, then every
// Interval. A store that is down is tried again at the next interval; the history only grows
// meanwhile.
type Pruner struct {
	Store     *Store
	Retention Retention
	Interval  time.Duration
	Log       logr.Logger
}

// NeedLeaderElection is true: one operator prunes.
func (p *Pruner) NeedLeaderElection() bool { return true }

// Start prunes until ctx ends (a manager Runnable).
func (p *Pruner) Start(ctx context.Context) error {
	for {
		deleted, err := p.Store.Prune(ctx, p.Retention, time.Now())
		switch {
		case err != nil:
			p.Log.Info("Cannot prune the history store; trying again later", "reason", p.Store.Mask(err.Error()),
				"in", p.Interval.String())
		case deleted > 0:
			p.Log.Info("Pruned the history store", "benchmarks", deleted, "maxAge", p.Retention.MaxAge.String(),
				"maxPerSeries", p.Retention.MaxPerSeries)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(p.Interval):
		}
	}
}
