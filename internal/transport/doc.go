// Package transport is the one seam between the reconciler and the kinds of path it measures.
// A Transport says what it needs next to the server (its peers: gateway, pooler, certificates,
// each with how to tell it is ready), what reason a benchmark fails with when a peer cannot
// become ready, what it adds to the runner pod (libpq settings, volumes, sidecars) and to the
// runner's contract (runspec.Run), and how it records its part of a result from the runner's
// report. The reconciler knows no transport type: ensure peers, wait (bounded), run the Job,
// record, remove what served only that transport.
//
// A transport type lives in a package of its own, internal/transport/<type>,
// and registers itself from init: Register, with the kinds of the peers it makes (so that the
// reconciler finds and removes them by label) and the RBAC markers they need beside it, and
// RegisterRules. It builds from this package's kit: Basic (embedded: no peers, nothing added,
// nothing recorded; the type overrides what it does), LibPQ, Context.LibPQVia, WithServerCA,
// WithNetworkPolicy, AdmitRunners, DeploymentReady, CertificatePeer, ServePeerCPU, PeerCPUServicePort,
// Words, TLSWords and the peer kinds. Which of its parts broke a run (Blame: its sidecars' container names, its peers'
// components) and how its path is named (Describe, from what Record kept) are its own. Outside its
// package it touches the API (its TransportType, its settings field and file, its reasons in
// api/conditions), one line of internal/transport/transports (the list that links every type into
// the operator and into the tests that read the registry), hack/images/runner-packages when it runs
// a Debian package, kubectl tunnelbench init's list (on purpose), and the generated files
// (`make generate manifests`): docs/development/adding-a-transport.md.
//
// What a transport needs from the runner is generic: its probes (runspec.Probe: texts the runner
// reads at both ends of the load, which the transport's Record turns into status evidence), its
// parts' CPU (runspec.CPUPart), and for a peer's program configured by a file, `tunnelbench-runner
// with-file`. A transport's own helper code lives in its package (proxy renders HAProxy's
// configuration and reads its counters). Code that must run in a pod and exists nowhere else (the
// WireGuard ends, internal/transport/vpn/wgtunnel) is a runner subcommand.
//
// The transports, each in its package beneath this one: direct (plain TCP, to the Service or the
// pod behind it), tls, ssh (its keys and commands beneath it), pooler (PgBouncer next to the
// server, in the runner pod, or in the runner pod over another transport's path; PgBouncer's
// configuration beneath it), vpn (WireGuard in user space, or OpenVPN with a TUN device at each end:
// vpn.kind picks one, and the admin's transports.allowPrivileged gates the second, whose pods run as
// root with NET_ADMIN: admission.Policy refuses it otherwise, from TransportSpec.PrivilegedReason;
// their tunnels' ends beneath it) and proxy (HAProxy in TCP mode). This package holds none of them:
// the interface, the registry, the shared rules and the kit.
//
// Nothing else: the reconciler, the Job builder, the results, the blame of a failed run, the
// summary and the cleanup are type-agnostic.
// Peers are owned by the benchmark (specs.OwnedMeta) and carry its labels; those that serve one
// transport carry its transport label and are removed when its run ends, the others (a gateway
// several transports share) when the benchmark ends. A Secret peer (never listed: the operator
// may only get Secrets by name) shares its name with another of the transport's peers. A runner-side capability the runner does not
// have yet (a new evidence to collect) is a field of runspec.Run and code in internal/runner.
package transport
