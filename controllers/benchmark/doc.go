// Package benchmark holds the TunnelBenchmark reconciler: it resolves the server, runs one Job
// per transport (initialization first, then the transports one after the other) and turns each
// runner's report into status, events and metrics.
package benchmark
