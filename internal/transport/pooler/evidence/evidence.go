// Package evidence is what a pooler's own counters say at one moment, in one form for every
// pooler implementation: the runner reads it at both ends of a run (PgBouncer's admin console or
// exporter, TunnelBench's MySQL pooler's JSON), and their difference is the evidence that the
// run's transactions went through the pooler, how many server connections it held, and how long
// clients waited for one.
package evidence

// Snapshot is a pooler's counters at one moment.
type Snapshot struct {
	// Transactions the pooler has passed to a server since it started: PgBouncer's SHOW STATS
	// total_xact_count summed over databases; the MySQL pooler's lends (a statement, or a
	// transaction held to its end).
	Transactions int64
	// WaitMicros is the microseconds clients have waited for a server connection since the
	// pooler started (its queue, which no thread's time shows): PgBouncer's total_wait_time, the
	// MySQL pooler's waits. Counted says the pooler reports it.
	WaitMicros  int64
	WaitCounted bool
	// ServerConnections is PgBouncer's SHOW SERVERS rows (connections it holds to the server),
	// or the server connections the MySQL pooler opened since it started.
	ServerConnections int
	// ServerTLS is the server connections' TLS ("" for plain TCP); every connection of a pool
	// uses the same settings.
	ServerTLS string
	// Version is the pooler's own, e.g. "PgBouncer 1.18.0".
	Version string
}
