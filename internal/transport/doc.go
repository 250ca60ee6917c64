// Package transport is the one seam between the reconciler and the kinds of path it measures.
// A Transport says what it needs next to the server (its peers: gateway, pooler, certificates,
// each with how to tell it is ready), what reason a benchmark fails with when a peer cannot
// become ready, what it adds to the runner pod (libpq settings, volumes, sidecars) and to the
// runner's contract (runspec.Run), and how it records its part of a result from the runner's
// report. The reconciler knows no transport type: ensure peers, wait (bounded), run the Job,
// record, remove what served only that transport.
//
// Adding a transport type touches (and nothing else):
//
//  1. api/v1alpha1/tunnelbenchmark_types.go: the TransportType constant and its Enum marker, and
//     the type's settings block on TransportSpec (with its CEL rule "only for type X");
//  2. this package: one file, <type>.go, with a type that embeds basic, overrides what it does,
//     and registers itself from init (Register, with the kinds of the peers it makes, so that the
//     reconciler finds and removes them by label), with the kubebuilder RBAC markers those peers
//     need; its tests in <type>_test.go. Which of its parts broke a run (Blame: its sidecars'
//     container names, its peers' components) and how its path is named (Describe, from what
//     Record kept) are the transport's own;
//  3. hack/images/runner-packages, when it runs a Debian package the image lacks;
//  4. generated files: `make generate manifests` (deepcopy, CRD, RBAC, the chart's copies).
//
// Nothing else: the reconciler, the Job builder, the results, the blame of a failed run, the
// summary and the cleanup are type-agnostic.
// Peers are owned by the benchmark (specs.OwnedMeta) and carry its labels; those that serve one
// transport carry its transport label and are removed when its run ends, the others (a gateway
// several transports share) when the benchmark ends. A Secret peer (never listed: the operator
// may only get Secrets by name) shares its name with another of the transport's peers. A runner-side capability the runner does not
// have yet (a new evidence to collect) is a field of runspec.Run and code in internal/runner.
package transport
