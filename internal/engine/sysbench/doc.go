// Package sysbench is the MySQL engine's load generator (MySQL and MariaDB): sysbench 1.0.20, as
// Debian ships it, linked against the MariaDB client library. It builds sysbench's command lines
// from a TunnelBenchmark load and reads what sysbench prints (its --report-interval lines, its
// final statistics and its FATAL lines) into the engine-neutral engine.Result.
//
// sysbench 1.0.20 differs from pgbench in ways the mapping states where they meet:
//   - one connection per thread: a load's clients are sysbench's threads;
//   - --events counts the whole run's transactions, pgbench's -t each client's;
//   - its interval reports give tps and a 95th percentile, not a mean latency: for a closed loop
//     the mean follows from Little's law (threads ÷ tps), for an open loop it is not known;
//   - it cannot reconnect per transaction (no --reconnect before 1.1) nor count transactions
//     above a latency limit: such loads are refused before they reach it.
package sysbench
