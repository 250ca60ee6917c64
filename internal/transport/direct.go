package transport

import (
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
	"github.com/tunnelbench/tunnelbench/internal/specs"
)

func init() {
	Register(benchv1.TransportDirect, func(c Context) Transport { return direct{server: c.Server} })
}

// direct is plain TCP. sslmode=disable is stated explicitly: libpq's default (prefer) would use
// TLS whenever the server offers it, and the baseline would silently measure TLS.
type direct struct {
	basic
	server Server
}

func (d direct) Pod(*runspec.Run) (specs.Pod, error) {
	return toServer(d.server, "disable"), nil
}
