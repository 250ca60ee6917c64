// Package direct is the direct transport: plain TCP from pgbench to the server, the baseline every
// other path is compared with. It registers itself from init (transport.Register) and is linked
// into the operator by internal/transport/transports.
package direct

import (
	"fmt"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

func init() {
	transport.Register(benchv1.TransportDirect, func(c transport.Context) transport.Transport { return direct{c: c} })
}

// direct is plain TCP. sslmode=disable is stated explicitly: libpq's default (prefer) would use
// TLS whenever the server offers it, and the baseline would silently measure TLS. Through the
// server's Service by default, or (via pod) to the address of the pod behind it, which leaves
// kube-proxy's translation off the path.
type direct struct {
	transport.Basic
	c transport.Context
}

func (d direct) DialsServerPod() bool { return d.c.Spec.DirectVia() == benchv1.ViaPod }

func (d direct) Pod(*runspec.Run) (specs.Pod, error) {
	if d.DialsServerPod() && d.c.Server.Pod.IP == "" {
		return specs.Pod{}, fmt.Errorf("transport %s: the pod behind the server's Service is not resolved", d.c.Spec.Name)
	}
	hop := d.Hop()
	p := transport.LibPQ(d.c.Server, hop.Host, hop.Port, "disable")
	d.c.LibPQVia(&p)
	return p, nil
}

func (d direct) Hop() transport.Hop {
	if pod := d.c.Server.Pod; d.DialsServerPod() {
		return transport.Hop{Host: pod.IP, Port: pod.Port, What: "pgbench → server pod"}
	}
	return transport.ServerHop(d.c.Server, "pgbench → server")
}

// Describe: which address the path ended at.
func (d direct) Describe(res *benchv1.TransportResult) string {
	if pod := d.c.Server.Pod; d.DialsServerPod() {
		return transport.Words(transport.TLSWords(res), fmt.Sprintf("straight to pod %s (%s:%d), no Service hop", pod.Name, pod.IP, pod.Port))
	}
	return transport.Words(transport.TLSWords(res), fmt.Sprintf("to %s:%d", d.c.Server.Host, d.c.Server.Port))
}
