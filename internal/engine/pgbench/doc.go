// Package pgbench builds pgbench command lines from a TunnelBenchmark load and parses what
// pgbench prints: the final summary, the -P progress lines and the error lines.
//
// The parser reads the output of pgbench 13 through 17, whose summaries differ: 13 prints two tps
// lines, 14 introduced "initial connection time", 15 added failures and tries, and with -C every
// version since 14 prints "average connection time" and a tps that includes reconnections.
package pgbench
