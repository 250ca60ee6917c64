package pooler

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// A sidecar pooler over another transport (pooler.over): the pooler on the client host in front
// of a tunnel or a proxy. The other transport builds its part of the path as it does alone (its
// peers, its sidecars, its evidence); the pooler's server connections go to that path's near end
// instead of the server, and pgbench connects to the pooler. Nothing here knows which transport
// it is over.

// over is the transport a sidecar pooler's server connections go through; ok is false when
// pooler.over is not set.
func (p pooler) over() (transport.Transport, bool, error) {
	name := p.settings().Over
	if name == "" || p.settings().Placement != benchv1.PoolerSidecar {
		return nil, false, nil
	}
	i := slices.IndexFunc(p.c.Benchmark.Spec.Transports, func(t benchv1.TransportSpec) bool { return t.Name == name })
	if i < 0 {
		return nil, true, fmt.Errorf("transport %s: pooler.over names no transport of this benchmark: %q", p.c.Spec.Name, name)
	}
	inner := p.c
	inner.Spec = p.c.Benchmark.Spec.Transports[i]
	tr, err := transport.For(inner)
	return tr, true, err
}

// overPeers are the other transport's peers, failing with its own reason, before the pooler's.
func overPeers(inner transport.Transport) ([]transport.Peer, error) {
	peers, err := inner.Peers()
	if err != nil {
		return nil, err
	}
	for i := range peers {
		ready := peers[i].Ready
		if ready == nil {
			continue
		}
		peers[i].Ready = func(ctx context.Context, c transport.Cluster, stored client.Object) (transport.Status, error) {
			s, err := ready(ctx, c, stored)
			if s.Problem != "" && s.Reason == "" {
				s.Reason = inner.FailureReason()
			}
			return s, err
		}
	}
	return peers, nil
}

// overPod builds the other transport's part of the runner pod and points the pooler at the
// near end of that path (where libpq would have connected through it). The other transport's
// sidecars start first: the pooler's startup waits on theirs. Its evidence (probes, CPU parts,
// ssh's log) is kept; its libpq settings are not, pgbench connects to the pooler.
func (p pooler) overPod(inner transport.Transport, pb *ownPgBouncer, run *runspec.Run) (specs.Pod, error) {
	innerRun := *run
	innerPod, err := inner.Pod(&innerRun)
	if err != nil {
		return specs.Pod{}, err
	}
	host, port := envValue(innerPod.Env, "PGHOST"), envValue(innerPod.Env, "PGPORT")
	n, err := strconv.Atoi(port)
	if host == "" || err != nil {
		return specs.Pod{}, fmt.Errorf("transport %s: the path of %s has no libpq end (%q:%q)", p.c.Spec.Name, p.settings().Over, host, port)
	}
	pb.config.ServerHost, pb.config.ServerPort = host, n
	run.Probes, run.CPUParts, run.SSHLogDir = innerRun.Probes, innerRun.CPUParts, innerRun.SSHLogDir
	// One pgbench, to the pooler: the other path's tunnels are the pooler's.
	run.Tunnels, run.TunnelPort = 1, 0
	return specs.Pod{Sidecars: innerPod.Sidecars, Volumes: innerPod.Volumes, Mounts: innerPod.Mounts}, nil
}

// envValue is a plain variable's value, "" when it is unset or comes from a Secret.
func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// overDescribe is the other transport's words for its part of the path.
func overDescribe(inner transport.Transport, res *benchv1.TransportResult) string {
	// The session's TLS is the pooler's server hop, which the pooler's words already say.
	bare := *res
	bare.TLS = nil
	return inner.Describe(&bare)
}
