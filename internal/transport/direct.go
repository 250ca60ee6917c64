package transport

import (
	"fmt"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

func init() {
	Register(benchv1.TransportDirect, func(c Context) Transport { return direct{c: c} })
}

// direct is plain TCP. sslmode=disable is stated explicitly: libpq's default (prefer) would use
// TLS whenever the server offers it, and the baseline would silently measure TLS. Through the
// server's Service by default, or (via pod) to the address of the pod behind it, which leaves
// kube-proxy's translation off the path.
type direct struct {
	Basic
	c Context
}

func (d direct) DialsServerPod() bool { return d.c.Spec.DirectVia() == benchv1.ViaPod }

func (d direct) Pod(*runspec.Run) (specs.Pod, error) {
	if d.DialsServerPod() && d.c.Server.Pod.IP == "" {
		return specs.Pod{}, fmt.Errorf("transport %s: the pod behind the server's Service is not resolved", d.c.Spec.Name)
	}
	hop := d.Hop()
	p := LibPQ(d.c.Server, hop.Host, hop.Port, "disable")
	d.c.LibPQVia(&p)
	return p, nil
}

func (d direct) Hop() Hop {
	if pod := d.c.Server.Pod; d.DialsServerPod() {
		return Hop{Host: pod.IP, Port: pod.Port, What: "pgbench → server pod"}
	}
	return serverHop(d.c.Server, "pgbench → server")
}

// Describe: which address the path ended at.
func (d direct) Describe(res *benchv1.TransportResult) string {
	if pod := d.c.Server.Pod; d.DialsServerPod() {
		return Words(TLSWords(res), fmt.Sprintf("straight to pod %s (%s:%d), no Service hop", pod.Name, pod.IP, pod.Port))
	}
	return Words(TLSWords(res), fmt.Sprintf("to %s:%d", d.c.Server.Host, d.c.Server.Port))
}
