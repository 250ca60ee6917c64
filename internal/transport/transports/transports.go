// Package transports links every transport type into a binary. Each type registers itself with
// package transport from its init; a type in its own package (internal/transport/proxy) is
// registered only in a binary that imports that package, and this package is that import, once:
// the one list a new transport's package joins. The operator's binary imports it, as do the tests
// that need every type; test/architecture fails on a command that links internal/transport
// without it.
package transports

import (
	// The proxy transport: HAProxy in TCP mode.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/proxy"
	// The direct transport: plain TCP, the baseline.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/direct"
	// The ssh transport: SSH tunnels through a gateway next to the server.
	// The pooler transport: PgBouncer next to the server, or in the runner pod over any path.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/pooler"
	_ "github.com/tunnelbench/tunnelbench/internal/transport/ssh"
	// The tls transport: libpq's TLS, optionally with a client certificate.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/tls"
	// The vpn transport: WireGuard in user space or OpenVPN, each through a gateway next to the server.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/vpn"
)
