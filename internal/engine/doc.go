// Package engine is the seam between TunnelBench and the database engine a benchmark loads. A
// Generator runs an engine's load generator (pgbench for PostgreSQL) and reads what it prints into
// a Result that the operator, the statistics and the reports read without knowing the engine.
// Each engine's generator lives in its own package below this one; what is common to all of them
// (a load split over processes that run at once, their results added up, a command line shown as
// a shell reads it) lives here.
package engine
