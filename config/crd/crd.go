// Package crd embeds the generated CustomResourceDefinitions, so that the operator checks what it
// writes against the very schema the API server enforces (internal/operator/statusguard). `make manifests`
// regenerates the files; this package only carries them.
package crd

import _ "embed"

// TunnelBenchmarks is the TunnelBenchmark CRD, as `make manifests` writes it.
//
//go:embed bases/bench.tunnelbench.io_tunnelbenchmarks.yaml
var TunnelBenchmarks []byte

// ScheduledTunnelBenchmarks is the ScheduledTunnelBenchmark CRD, as `make manifests` writes it.
//
//go:embed bases/bench.tunnelbench.io_scheduledtunnelbenchmarks.yaml
var ScheduledTunnelBenchmarks []byte
