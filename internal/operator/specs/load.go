package specs

import (
	"cmp"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// LoadFor converts a benchmark's load into the runner's. The apiserver has applied the schema's
// defaults; benchv1's Default* constants (held equal to them by a test) fill what a Go client left
// unset. An inline script wins over a builtin one.
func LoadFor(load benchv1.LoadSpec) runspec.Load {
	out := runspec.Load{
		Builtin:          string(load.Builtin),
		Protocol:         string(cmp.Or(load.Protocol, benchv1.DefaultProtocol)),
		Clients:          int(cmp.Or(load.Clients, benchv1.DefaultClients)),
		Threads:          int(cmp.Or(load.Threads, benchv1.DefaultThreads)),
		Reconnect:        load.Reconnect,
		ProgressInterval: benchv1.DefaultProgressInterval,
		StallTimeout:     benchv1.DefaultStallTimeout,
	}
	if load.Script != "" {
		out.Builtin, out.Script = "", true
	}
	switch {
	case load.Transactions != nil:
		out.Transactions = int(*load.Transactions)
	case load.Duration != nil:
		out.Duration = load.Duration.Duration
	default:
		out.Duration = benchv1.DefaultDuration
	}
	if load.ProgressInterval != nil {
		out.ProgressInterval = load.ProgressInterval.Duration
	}
	if load.StallTimeout != nil {
		out.StallTimeout = load.StallTimeout.Duration
	}
	if load.Rate != nil {
		out.Rate = float64(*load.Rate)
	}
	if load.LatencyLimit != nil {
		out.LatencyLimit = load.LatencyLimit.Duration
	}
	return out
}
