// Package transports links every transport type into a binary. Each type, in its own package
// beneath internal/transport, registers itself with package transport from its init, so it is
// registered only in a binary that imports its package; this package is that import, once: the
// one list a new transport's package joins. The operator's binary imports it, as do the tests
// that need every type; test/architecture fails on a command that links internal/transport
// without it.
package transports

import (
	// The direct transport: plain TCP, the baseline.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/direct"
	// The pooler transport: PgBouncer next to the server, or in the runner pod over any path.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/pooler"
	// The proxy transport: HAProxy in TCP mode.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/proxy"
	// The ssh transport: SSH tunnels through a gateway next to the server.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/ssh"
	// The tls transport: libpq's TLS, optionally with a client certificate.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/tls"
	// The vpn transport: WireGuard in user space or OpenVPN, each through a gateway next to the server.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/vpn"
)
