// Package console reads PgBouncer's admin console: SHOW STATS and SHOW SERVERS as evidence that
// a run's traffic went through the pooler. It is the runner's alone: the operator, which only
// configures PgBouncer, does not link the database driver.
package console

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/evidence"
)

// AdminDatabase is the name of PgBouncer's admin console.
const AdminDatabase = "pgbouncer"

// AdminConfig turns a connection configuration of the pooler into one of its admin console, which
// speaks only the simple query protocol.
func AdminConfig(cfg *pgx.ConnConfig) *pgx.ConnConfig {
	admin := cfg.Copy()
	admin.Database = AdminDatabase
	admin.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	admin.StatementCacheCapacity = 0
	admin.DescriptionCacheCapacity = 0
	return admin
}

// Observe connects to the admin console and takes a snapshot.
func Observe(ctx context.Context, cfg *pgx.ConnConfig) (*evidence.Snapshot, error) {
	conn, err := pgx.ConnectConfig(ctx, AdminConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("cannot connect to PgBouncer's admin console: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	snap := &evidence.Snapshot{}
	stats, err := rows(ctx, conn, "SHOW STATS")
	if err != nil {
		return nil, err
	}
	for _, r := range stats {
		snap.Transactions += atoi(r["total_xact_count"])
		if wait, ok := r["total_wait_time"]; ok {
			snap.WaitMicros += atoi(wait)
			snap.WaitCounted = true
		}
	}
	servers, err := rows(ctx, conn, "SHOW SERVERS")
	if err != nil {
		return nil, err
	}
	snap.ServerConnections = len(servers)
	if len(servers) > 0 {
		snap.ServerTLS = servers[0]["tls"]
	}
	if version, err := rows(ctx, conn, "SHOW VERSION"); err == nil && len(version) > 0 {
		snap.Version = version[0]["version"]
	}
	return snap, nil
}

// rows runs an admin command and returns its rows by column name: columns are added between
// PgBouncer releases, so positions cannot be relied on.
func rows(ctx context.Context, conn *pgx.Conn, command string) ([]map[string]string, error) {
	result := conn.PgConn().Exec(ctx, command)
	results, err := result.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("PgBouncer's %s failed: %w", command, err)
	}
	var out []map[string]string
	for _, res := range results {
		for _, row := range res.Rows {
			m := make(map[string]string, len(row))
			for i, fd := range res.FieldDescriptions {
				m[fd.Name] = string(row[i])
			}
			out = append(out, m)
		}
	}
	return out, nil
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
