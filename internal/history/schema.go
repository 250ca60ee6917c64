package history

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the store's schema, one version each, applied in order and never edited once
// released: a new column is a new version.
var migrations = []string{
	// 1: a benchmark's identity (its UID: recording it twice is one row set), what it measured
	// (the whole transport result, provenance, cost and limiter included, as JSON), the figures
	// a schedule is judged by, and every run.
	`CREATE TABLE tunnelbench_benchmarks (
		uid            uuid PRIMARY KEY,
		namespace      text NOT NULL,
		name           text NOT NULL,
		schedule       text NOT NULL DEFAULT '',
		template_hash  text NOT NULL DEFAULT '',
		server         text NOT NULL DEFAULT '',
		server_version text NOT NULL DEFAULT '',
		spec           jsonb NOT NULL,
		completed_at   timestamptz NOT NULL,
		recorded_at    timestamptz NOT NULL DEFAULT now()
	);
	CREATE INDEX tunnelbench_benchmarks_series ON tunnelbench_benchmarks (namespace, schedule, template_hash, completed_at);
	CREATE TABLE tunnelbench_results (
		benchmark_uid uuid NOT NULL REFERENCES tunnelbench_benchmarks (uid) ON DELETE CASCADE,
		transport     text NOT NULL,
		type          text NOT NULL,
		result        jsonb NOT NULL,
		PRIMARY KEY (benchmark_uid, transport)
	);
	CREATE TABLE tunnelbench_figures (
		benchmark_uid uuid NOT NULL REFERENCES tunnelbench_benchmarks (uid) ON DELETE CASCADE,
		transport     text NOT NULL,
		figure        text NOT NULL,
		value         double precision NOT NULL,
		low           double precision,
		high          double precision,
		regressed     boolean NOT NULL DEFAULT false,
		PRIMARY KEY (benchmark_uid, transport, figure)
	);
	CREATE TABLE tunnelbench_runs (
		benchmark_uid  uuid NOT NULL REFERENCES tunnelbench_benchmarks (uid) ON DELETE CASCADE,
		transport      text NOT NULL,
		round          integer NOT NULL,
		tps            double precision NOT NULL,
		latency_avg_ms double precision NOT NULL,
		transactions   bigint NOT NULL,
		failed         bigint NOT NULL,
		run            jsonb NOT NULL,
		PRIMARY KEY (benchmark_uid, transport, round)
	);`,
}

// lockKey serializes migrations between operators (a rolling update runs two at once):
// pg_advisory_xact_lock's key, "tunnelbench" in ASCII folded into 63 bits.
const lockKey = 0x74756e6e656c62

// Migrate brings the store's schema to the newest version this operator knows, each version in
// its own transaction under an advisory lock, and refuses a store a newer operator migrated
// beyond what this one knows. It returns the version the store is at.
func Migrate(ctx context.Context, conn *pgx.Conn) (int, error) {
	for {
		done, version, err := migrateOne(ctx, conn)
		if err != nil || done {
			return version, err
		}
	}
}

// migrateOne applies the next version, if any, and says whether the schema is current.
func migrateOne(ctx context.Context, conn *pgx.Conn) (done bool, version int, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, 0, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(lockKey)); err != nil {
		return false, 0, err
	}
	// Under the lock: two CREATE TABLE IF NOT EXISTS at once collide in PostgreSQL's catalog.
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS tunnelbench_schema (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return false, 0, fmt.Errorf("cannot create the schema table: %w", err)
	}
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM tunnelbench_schema`).Scan(&version); err != nil {
		return false, 0, err
	}
	switch {
	case version > len(migrations):
		return false, version, fmt.Errorf("the history store's schema is at version %d, newer than this operator knows (%d): "+
			"upgrade the operator", version, len(migrations))
	case version == len(migrations):
		return true, version, nil
	}
	if _, err := tx.Exec(ctx, migrations[version]); err != nil {
		return false, version, fmt.Errorf("migration %d: %w", version+1, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO tunnelbench_schema (version) VALUES ($1)`, version+1); err != nil {
		return false, version, err
	}
	return false, version + 1, tx.Commit(ctx)
}
