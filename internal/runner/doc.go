// Package runner is what runs inside a benchmark Job's pod: it waits (bounded) for the server,
// records the TLS session the server negotiated, runs pgbench with its output streamed to the
// container log, parses the summary and writes a report as the termination message.
//
// The connection comes from libpq's environment variables (PGHOST, PGSSLMODE, PGPASSWORD from a
// Secret, ...), read alike by pgbench and by the pgx preflight, so the password never appears in
// arguments, logs or the report.
package runner
