package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Labels put on every object the operator creates for a benchmark.
const (
	LabelBenchmark = "tunnelbench.io/benchmark"
	LabelTransport = "tunnelbench.io/transport"
	LabelComponent = "app.kubernetes.io/component"
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"

	// InitTransportLabel is the transport label value of the `pgbench -i` Job.
	InitTransportLabel = "init"
)

// DefaultDuration is each run's duration when neither duration nor transactions is set.
const DefaultDuration = 60 * time.Second

// maxJobNameLength keeps Job names usable as label values: the Job controller copies the name into
// the batch.kubernetes.io/job-name label of its pods.
const maxJobNameLength = 63

// JobName is the deterministic name of the Job that runs one transport ("init" for the
// initialization Job). Deterministic names make creation idempotent across operator restarts.
func (tb *TunnelBenchmark) JobName(transport string) string {
	name := tb.Name + "-" + transport
	if len(name) <= maxJobNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "-" + hex.EncodeToString(sum[:])[:8]
	return name[:maxJobNameLength-len(suffix)] + suffix
}

// TimeoutDuration is spec.timeout with its default applied.
func (tb *TunnelBenchmark) TimeoutDuration() time.Duration {
	if tb.Spec.Timeout == nil {
		return 30 * time.Minute
	}
	return tb.Spec.Timeout.Duration
}

// Result returns the recorded result of a transport, or nil.
func (s *TunnelBenchmarkStatus) Result(transport string) *TransportResult {
	for i := range s.Results {
		if s.Results[i].Transport == transport {
			return &s.Results[i]
		}
	}
	return nil
}

// ProgressString renders "done/total".
func ProgressString(done, total int) string { return fmt.Sprintf("%d/%d", done, total) }

// GatewayName is the name of the SSH gateway's Deployment, Service and key Secret.
func (tb *TunnelBenchmark) GatewayName() string {
	return tb.JobName("ssh-gateway")
}

// HasSSH reports whether any transport is an SSH tunnel.
func (tb *TunnelBenchmark) HasSSH() bool {
	for _, t := range tb.Spec.Transports {
		if t.Type == TransportSSH {
			return true
		}
	}
	return false
}

// PoolerName is the name of the pooler objects (Deployment, Service, TLS Secret or CloudNativePG
// Pooler) of a pooler transport.
func (tb *TunnelBenchmark) PoolerName(transport string) string {
	return tb.JobName(transport + "-pooler")
}

// maxClusterNameLength is CloudNativePG's limit on Cluster names, which become parts of Service,
// Secret and pod names.
const maxClusterNameLength = 50

// ManagedClusterName is the name of the CloudNativePG Cluster created for spec.server.managed.
func (tb *TunnelBenchmark) ManagedClusterName() string {
	name := tb.Name + "-pg"
	if len(name) <= maxClusterNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "-" + hex.EncodeToString(sum[:])[:8]
	return name[:maxClusterNameLength-len(suffix)] + suffix
}

// CNPGClusterName is the CloudNativePG Cluster of the server, or "" for an external server.
func (s ServerSpec) CNPGClusterName(tb *TunnelBenchmark) string {
	switch {
	case s.CNPG != nil:
		return s.CNPG.ClusterName
	case s.Managed != nil:
		return tb.ManagedClusterName()
	}
	return ""
}
