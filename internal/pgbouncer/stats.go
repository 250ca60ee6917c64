package pgbouncer

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// AdminDatabase is the name of PgBouncer's admin console.
const AdminDatabase = "pgbouncer"

// Snapshot is what the admin console reports at one moment.
type Snapshot struct {
	// Transactions is SHOW STATS' total_xact_count summed over databases: transactions PgBouncer
	// has passed to a server since it started.
	Transactions int64
	// ServerConnections counts SHOW SERVERS' rows: connections PgBouncer holds to the server.
	ServerConnections int
	// ServerTLS is the TLS column of SHOW SERVERS ("" for plain TCP), from the first server
	// connection; every connection of a pool uses the same settings.
	ServerTLS string
}

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
func Observe(ctx context.Context, cfg *pgx.ConnConfig) (*Snapshot, error) {
	conn, err := pgx.ConnectConfig(ctx, AdminConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("cannot connect to PgBouncer's admin console: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	snap := &Snapshot{}
	stats, err := rows(ctx, conn, "SHOW STATS")
	if err != nil {
		return nil, err
	}
	for _, r := range stats {
		snap.Transactions += atoi(r["total_xact_count"])
	}
	servers, err := rows(ctx, conn, "SHOW SERVERS")
	if err != nil {
		return nil, err
	}
	snap.ServerConnections = len(servers)
	if len(servers) > 0 {
		snap.ServerTLS = servers[0]["tls"]
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
