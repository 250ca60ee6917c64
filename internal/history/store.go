// Package history keeps finished benchmarks' results in a PostgreSQL database that outlives them:
// a versioned schema migrated by the operator, idempotent writes keyed by the benchmark's UID,
// and the series a schedule's new result is judged against.
package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/regress"
)

// Store is the history database. Its methods may be called while the database is down, or before
// its connection string exists: each says so in its error, and the connection is opened and the
// schema migrated at the first call that can.
type Store struct {
	// uri gives the connection string: a constant, or a file the kubelet fills once the store's
	// Secret exists.
	uri func() (string, error)

	mu       sync.Mutex
	pool     *pgxpool.Pool
	dsn      string // the connection string pool was made with
	password string
	migrated bool
}

// Open prepares a store for the connection string dsn without connecting: the operator starts
// whether the database is up or not.
func Open(dsn string) (*Store, error) {
	s := &Store{uri: func() (string, error) { return dsn, nil }}
	if _, err := parse(dsn); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenFile prepares a store whose connection string is the content of path (a Secret's key
// mounted as a file): until the file exists, every call says the store is not there yet.
func OpenFile(path string) *Store {
	return &Store{uri: func() (string, error) {
		b, err := os.ReadFile(path)
		if err != nil || len(strings.TrimSpace(string(b))) == 0 {
			return "", fmt.Errorf("the history store's connection string is not there yet (%s: its Secret may not exist yet)", path)
		}
		return strings.TrimSpace(string(b)), nil
	}}
}

// parse reads a connection string without ever quoting it: pgx's errors may hold the password.
func parse(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("the history store's connection string cannot be parsed " +
			"(key uri of its Secret: postgresql://user:password@host:port/database)")
	}
	cfg.MaxConns = 2
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	return cfg, nil
}

// Mask replaces the store's password in text (an error to put in a status or a log) with "***".
func (s *Store) Mask(text string) string {
	s.mu.Lock()
	password := s.password
	s.mu.Unlock()
	if password == "" {
		return text
	}
	return strings.ReplaceAll(text, password, "***")
}

// Close releases the store's connections.
func (s *Store) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pool != nil {
		s.pool.Close()
	}
}

// ensure opens the pool and migrates the schema. The connection string is read again at every
// call: a Secret fixed or rotated (a new password, another host) is used from the next call on,
// the old pool closed, without restarting the operator; the schema is checked again on the new
// database.
func (s *Store) ensure(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dsn, err := s.uri()
	if err != nil {
		return err
	}
	if s.pool != nil && dsn != s.dsn {
		s.pool.Close()
		s.pool, s.migrated = nil, false
	}
	if s.migrated {
		return nil
	}
	if s.pool == nil {
		cfg, err := parse(dsn)
		if err != nil {
			return err
		}
		if s.pool, err = pgxpool.NewWithConfig(context.Background(), cfg); err != nil {
			return err
		}
		s.dsn, s.password = dsn, cfg.ConnConfig.Password
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("the history store is unreachable: %w", err)
	}
	defer conn.Release()
	if _, err := Migrate(ctx, conn.Conn()); err != nil {
		return err
	}
	s.migrated = true
	return nil
}

// Migrate brings the schema up to date now (the operator calls it at start; a failure there is
// retried at the first write).
func (s *Store) Migrate(ctx context.Context) error { return s.ensure(ctx) }

// Record is what the store keeps of one finished benchmark.
type Record struct {
	UID, Namespace, Name string
	// Schedule and TemplateHash place a scheduled benchmark in its series; empty otherwise.
	Schedule, TemplateHash string
	Server, ServerVersion  string
	Spec                   benchv1.TunnelBenchmarkSpec
	CompletedAt            time.Time
	Results                []benchv1.TransportResult
	Figures                []regress.Figures
}

// RecordOf is tb's record, in the series of schedule and templateHash (empty for a benchmark no
// schedule created).
func RecordOf(tb *benchv1.TunnelBenchmark, schedule, templateHash string) Record {
	r := Record{UID: string(tb.UID), Namespace: tb.Namespace, Name: tb.Name, Schedule: schedule,
		TemplateHash: templateHash, Server: tb.Status.Server, ServerVersion: tb.Status.ServerVersion,
		Spec: tb.Spec, Results: tb.Status.Unswept(), Figures: regress.FromBenchmark(tb)}
	r.CompletedAt = tb.CreationTimestamp.Time
	if tb.Status.CompletionTime != nil {
		r.CompletedAt = tb.Status.CompletionTime.Time
	}
	return r
}

// Write records r once: a benchmark already recorded (the same UID: an operator that restarted
// before it could say so, or a conflict on the status write) is left as it is. It says whether
// this call wrote it.
func (s *Store) Write(ctx context.Context, r Record) (bool, error) {
	if err := s.ensure(ctx); err != nil {
		return false, err
	}
	spec, err := json.Marshal(r.Spec)
	if err != nil {
		return false, err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("the history store is unreachable: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	tag, err := tx.Exec(ctx, `INSERT INTO tunnelbench_benchmarks
		(uid, namespace, name, schedule, template_hash, server, server_version, spec, completed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (uid) DO NOTHING`,
		r.UID, r.Namespace, r.Name, r.Schedule, r.TemplateHash, r.Server, r.ServerVersion, spec, r.CompletedAt)
	if err != nil {
		return false, err
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	if err := writeResults(ctx, tx, r); err != nil {
		return false, err
	}
	return true, tx.Commit(ctx)
}

// writeResults inserts r's transports, figures and runs in one batch.
func writeResults(ctx context.Context, tx pgx.Tx, r Record) error {
	b := &pgx.Batch{}
	for _, res := range r.Results {
		body, err := json.Marshal(res)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO tunnelbench_results (benchmark_uid, transport, type, result) VALUES ($1, $2, $3, $4)`,
			r.UID, res.Transport, string(res.Type), body)
		for _, run := range res.Runs {
			body, err := json.Marshal(run)
			if err != nil {
				return err
			}
			b.Queue(`INSERT INTO tunnelbench_runs (benchmark_uid, transport, round, tps, latency_avg_ms, transactions, failed, run)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
				r.UID, res.Transport, run.Round, run.TPS, run.LatencyAvgMs, run.Transactions, run.FailedTransactions, body)
		}
	}
	for _, f := range r.Figures {
		for fig, smp := range f.Samples {
			b.Queue(`INSERT INTO tunnelbench_figures (benchmark_uid, transport, figure, value, low, high)
				VALUES ($1, $2, $3, $4, $5, $6)`, r.UID, f.Transport, string(fig), smp.Value, nullable(smp.Low), nullable(smp.High))
		}
	}
	return tx.SendBatch(ctx, b).Close()
}

func nullable(v float64) *float64 {
	if v == 0 {
		return nil
	}
	return &v
}

// Recorded says whether the benchmark of uid is in the store.
func (s *Store) Recorded(ctx context.Context, uid string) (bool, error) {
	if err := s.ensure(ctx); err != nil {
		return false, err
	}
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM tunnelbench_benchmarks WHERE uid = $1`, uid).Scan(&n)
	return n > 0, err
}

// SeriesKey names a schedule's series: the benchmarks of one template.
type SeriesKey struct {
	Namespace, Schedule, TemplateHash string
}

// Point is one figure of one benchmark of a series.
type Point struct {
	UID, Benchmark    string
	CompletedAt       time.Time
	Transport, Figure string
	Value, Low, High  float64
	Regressed         bool
}

// Series is the figures of the newest limit benchmarks of key's series, oldest first.
func (s *Store) Series(ctx context.Context, key SeriesKey, limit int) ([]Point, error) {
	if err := s.ensure(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT b.uid::text, b.name, b.completed_at, f.transport, f.figure, f.value,
		       coalesce(f.low, 0), coalesce(f.high, 0), f.regressed
		FROM (SELECT uid, name, completed_at FROM tunnelbench_benchmarks
		      WHERE namespace = $1 AND schedule = $2 AND template_hash = $3
		      ORDER BY completed_at DESC LIMIT $4) b
		JOIN tunnelbench_figures f ON f.benchmark_uid = b.uid
		ORDER BY b.completed_at, f.transport, f.figure`, key.Namespace, key.Schedule, key.TemplateHash, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Point, error) {
		var p Point
		err := row.Scan(&p.UID, &p.Benchmark, &p.CompletedAt, &p.Transport, &p.Figure, &p.Value, &p.Low, &p.High, &p.Regressed)
		return p, err
	})
}

// MarkRegressed marks a benchmark's figure found regressed, which leaves it out of later
// references. Marking it again changes nothing.
func (s *Store) MarkRegressed(ctx context.Context, uid, transport string, figure regress.Figure) error {
	if err := s.ensure(ctx); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `UPDATE tunnelbench_figures SET regressed = true
		WHERE benchmark_uid = $1 AND transport = $2 AND figure = $3`, uid, transport, string(figure))
	return err
}

// Retention bounds what the store keeps; a zero field bounds nothing.
type Retention struct {
	// MaxAge drops a benchmark completed longer ago.
	MaxAge time.Duration
	// MaxPerSeries keeps the newest benchmarks of each series (namespace, schedule, template's
	// hash; the benchmarks no schedule made count as one series per namespace). A schedule's
	// regression window reads the newest 3 × window + 1, so this must not go below that.
	MaxPerSeries int
}

// Prune deletes, with their results, figures and runs, the benchmarks retention no longer keeps,
// as of now, and says how many.
func (s *Store) Prune(ctx context.Context, retention Retention, now time.Time) (int64, error) {
	if err := s.ensure(ctx); err != nil {
		return 0, err
	}
	var deleted int64
	if retention.MaxAge > 0 {
		tag, err := s.pool.Exec(ctx, `DELETE FROM tunnelbench_benchmarks WHERE completed_at < $1`, now.Add(-retention.MaxAge))
		if err != nil {
			return 0, fmt.Errorf("cannot delete the benchmarks older than %s: %w", retention.MaxAge, err)
		}
		deleted += tag.RowsAffected()
	}
	if retention.MaxPerSeries > 0 {
		tag, err := s.pool.Exec(ctx, `DELETE FROM tunnelbench_benchmarks WHERE uid IN (
			SELECT uid FROM (SELECT uid, row_number() OVER (PARTITION BY namespace, schedule, template_hash
			                                                 ORDER BY completed_at DESC, uid) AS newer
			                 FROM tunnelbench_benchmarks) ranked
			WHERE newer > $1)`, retention.MaxPerSeries)
		if err != nil {
			return deleted, fmt.Errorf("cannot delete the benchmarks beyond %d per series: %w", retention.MaxPerSeries, err)
		}
		deleted += tag.RowsAffected()
	}
	return deleted, nil
}
