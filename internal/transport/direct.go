package transport

import (
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
	"github.com/tunnelbench/tunnelbench/internal/specs"
)

func init() {
	Register(benchv1.TransportDirect, func(c Context) Transport { return direct{c: c} })
}

// direct is plain TCP. sslmode=disable is stated explicitly: libpq's default (prefer) would use
// TLS whenever the server offers it, and the baseline would silently measure TLS.
type direct struct {
	basic
	c Context
}

func (d direct) Pod(*runspec.Run) (specs.Pod, error) {
	p := toServer(d.c.Server, "disable")
	d.c.libpqVia(&p)
	return p, nil
}

func (d direct) Hop() Hop { return serverHop(d.c.Server, "pgbench → server") }
