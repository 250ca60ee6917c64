package transport

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// Transport is one kind of path between pgbench and the server. The reconciler drives every
// transport the same way, knowing none of them: create its peers in order and wait (bounded) for
// each, build the runner pod with what the transport adds, run the Job, and let the transport
// record its part of the result.
type Transport interface {
	// Peers are the objects the transport connects through (an SSH gateway, a pooler, a
	// certificate), in the order they are created: each one is awaited before the next.
	Peers() ([]Peer, error)
	// FailureReason is the benchmark's failure reason when a peer cannot become ready.
	FailureReason() string
	// Pod is what the transport adds to the runner pod: libpq's settings, volumes, sidecars. It
	// sets its part of the runner's contract in run (tunnels, the pooler to observe).
	Pod(run *runspec.Run) (specs.Pod, error)
	// Record writes the transport's part of the result (what the path negotiated, the pooler's
	// evidence) from the runner's report.
	Record(rep *report.Report, out *benchv1.TransportResult)
	// VerifiesServer reports whether the transport checks the server certificate, and so needs the
	// server's CA.
	VerifiesServer() bool
	// UserSecrets are the Secrets the user must provide for this transport (a client certificate),
	// checked before anything runs.
	UserSecrets() []SecretRef
	// Hop is the part of the path an emulated link sits on (link.go): from the runner pod to the
	// path's remote side.
	Hop() Hop
	// Blame is the failure reason when part of this transport's path broke during a run: part is
	// a runner pod's sidecar (its container name) or a peer's component label; "" when the part is
	// not this transport's.
	Blame(part string) string
	// Describe says, in a few words, what the path negotiated and how it was built, from the
	// recorded result: the summary and the plugin print it as the path's description.
	Describe(res *benchv1.TransportResult) string
}

// ReadThroughNodes is a transport with a peer whose pods the operator does not make (a
// CloudNativePG Pooler's): their CPU is read through the node readers, as the server's is.
type ReadThroughNodes interface {
	// NodeReadPods names the peer's part and selects its pods in the benchmark's namespace; ok is
	// false when this transport has no such peer.
	NodeReadPods() (part string, labels map[string]string, ok bool)
}

// Context is what a transport is built from.
type Context struct {
	Benchmark *benchv1.TunnelBenchmark
	Spec      benchv1.TransportSpec
	Server    Server
	// Defaults are the operator's settings of the pods it runs (the runner image serves the
	// peers too).
	Defaults specs.RunnerDefaults
	// CertificateWait bounds the wait for cert-manager to issue a certificate, from its creation.
	CertificateWait time.Duration
	// Link is the transport's emulated link (spec.network or its own), none when not Emulated.
	Link benchv1.Link
	// NetworkPolicies has the peers the operator starts (the SSH gateway, a shared PgBouncer)
	// accept connections only from the benchmark's runner pods.
	NetworkPolicies bool
}

// PrivilegedSetting is the chart value (and the operator's flag) that allows privileged
// transports.
const PrivilegedSetting = "transports.allowPrivileged (the operator's --allow-privileged-transports)"

// SecretRef is a Secret a transport reads, with the keys it needs and what it is for (messages).
type SecretRef struct {
	Name string
	What string
	Keys []string
}

// Peer is one object a transport needs next to the server. The reconciler creates it when it is
// missing, refuses it when it exists but belongs to someone else, and waits until Ready says so.
type Peer struct {
	// Object is the desired object: named, labelled and owned by the benchmark (specs.OwnedMeta).
	// Unstructured objects carry their kind.
	Object client.Object
	// Generate fills in content made only once, right before the object is created (keys,
	// certificates): an existing object keeps its own.
	Generate func() error
	// Ready reads the stored object; nil means ready as soon as it exists.
	Ready Readiness
	// Created, when set, is the event to record when this pass created the object.
	Created func() (reason, note string)
	// NotInstalled is the problem to report when the object's kind is unknown to the cluster.
	NotInstalled string
}

// Readiness judges a stored peer.
type Readiness func(ctx context.Context, c Cluster, stored client.Object) (Status, error)

// Status is a peer's state as its Readiness judges it.
type Status struct {
	Ready bool
	// Problem, when set, says why it never will be ready by itself: the benchmark fails at once
	// with it, with Reason when set and the transport's FailureReason otherwise.
	Problem string
	Reason  string
	// Waiting says what it still waits for, for the benchmark's Progressing condition.
	Waiting string
}

// Cluster is what a transport may read of the cluster while it judges its peers.
type Cluster interface {
	// Get reads an object of the benchmark's namespace without a cache.
	Get(ctx context.Context, name string, obj client.Object) error
	// PodTrouble judges the pods with these labels: the first one that cannot start by itself
	// (Problem), or that waits for something that may still come (Waiting: a node to fit on,
	// within a bounded wait); zero when they progress.
	PodTrouble(ctx context.Context, labels map[string]string, what string) Status
	// Now is the reconciler's clock.
	Now() time.Time
}

// Factory builds a transport of one type.
type Factory func(Context) Transport

type registration struct {
	factory Factory
	kinds   []schema.GroupVersionKind
}

var registry = map[benchv1.TransportType]registration{}

// Register makes a transport type known; each transport's file calls it from init, with the kinds
// of the peers it makes (besides Secrets, which the operator may not list): the reconciler finds
// and removes peers by listing these kinds by label. The same file carries the RBAC markers for
// them.
func Register(t benchv1.TransportType, f Factory, peerKinds ...schema.GroupVersionKind) {
	if _, dup := registry[t]; dup {
		panic(fmt.Sprintf("transport type %q registered twice", t))
	}
	registry[t] = registration{factory: f, kinds: peerKinds}
}

// Types are the registered transport types, sorted.
func Types() []benchv1.TransportType {
	out := make([]benchv1.TransportType, 0, len(registry))
	for t := range registry {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// PeerKinds are the kinds of every registered transport's peers, each once, in a stable order.
func PeerKinds() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, t := range Types() {
		for _, k := range registry[t].kinds {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// For returns the transport of c.Spec's type.
func For(c Context) (Transport, error) {
	r, ok := registry[c.Spec.Type]
	if !ok {
		return nil, fmt.Errorf("transport %q: unsupported type %q", c.Spec.Name, c.Spec.Type)
	}
	return r.factory(c), nil
}

// VerifiesServer reports whether any transport of the benchmark checks the server certificate.
func VerifiesServer(tb *benchv1.TunnelBenchmark, server Server) bool {
	for _, t := range tb.Spec.Transports {
		if tr, err := For(Context{Benchmark: tb, Spec: t, Server: server}); err == nil && tr.VerifiesServer() {
			return true
		}
	}
	return false
}

// Basic is the part of a transport that has no peers, adds nothing to the run and records
// nothing of its own; transports embed it and override what they do.
type Basic struct{}

// Peers are none.
func (Basic) Peers() ([]Peer, error) { return nil, nil }

// FailureReason is that the run's Job failed.
func (Basic) FailureReason() string { return conditions.ReasonJobFailed }

// Record keeps nothing of its own.
func (Basic) Record(*report.Report, *benchv1.TransportResult) {}

// VerifiesServer is false: no certificate is checked.
func (Basic) VerifiesServer() bool { return false }

// UserSecrets are none.
func (Basic) UserSecrets() []SecretRef { return nil }

// Blame names no part of its own.
func (Basic) Blame(string) string { return "" }

// Describe says what libpq's TLS negotiated.
func (Basic) Describe(res *benchv1.TransportResult) string { return TLSWords(res) }

// BrokenReason is the failure reason of a broken part of a run's path: the link emulator's sidecar
// or a part of the transport's own (tr may be nil: the initialization has no transport).
func BrokenReason(tr Transport, part string) string {
	if part == LinkContainer {
		return conditions.ReasonNetworkEmulationFailed
	}
	if tr == nil {
		return ""
	}
	return tr.Blame(part)
}

// TLSWords is what libpq's TLS negotiated, "" without TLS.
func TLSWords(res *benchv1.TransportResult) string {
	if t := res.TLS; t != nil {
		return t.Version + " " + t.Cipher
	}
	return ""
}

// Words joins the non-empty parts of a description.
func Words(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), "; ")
}
