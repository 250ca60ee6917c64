// Package chaosmesh builds the chaos-mesh NetworkChaos objects of an emulated link and reads back
// whether chaos-mesh injected them. The objects are unstructured: the operator needs neither
// chaos-mesh's Go module nor its CRDs unless a benchmark asks for the chaos-mesh emulator.
package chaosmesh

import (
	"cmp"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// NetworkChaosGVK is chaos-mesh's NetworkChaos kind.
var NetworkChaosGVK = schema.GroupVersionKind{Group: "chaos-mesh.org", Version: "v1alpha1", Kind: "NetworkChaos"}

// Rate renders a bandwidth in bits per second as NetworkChaos's bandwidth.rate. chaos-mesh reads
// the rate as an integer followed by bps, kbps, mbps or gbps meaning *bytes* per second in steps
// of 1024, so 50 Mbit/s (6,250,000 bytes/s) is neither "50mbps" nor "6.25mbps": the largest unit
// that divides the byte rate exactly is used, bytes per second otherwise, so nothing is rounded.
func Rate(bitsPerSecond int64) string {
	bytes := bitsPerSecond / 8
	for _, u := range []struct {
		name string
		size int64
	}{{"gbps", 1 << 30}, {"mbps", 1 << 20}, {"kbps", 1 << 10}} {
		if bytes >= u.size && bytes%u.size == 0 {
			return fmt.Sprintf("%d%s", bytes/u.size, u.name)
		}
	}
	return fmt.Sprintf("%dbps", bytes)
}

// tbf's bucket and queue for a byte rate: the bucket holds at least what the kernel sends in a
// tick at 100 Hz and a 64 KiB segment (GSO); the queue 100 ms of the rate, so that a TCP sender's
// window fits instead of being dropped into a sawtooth.
func buffer(bytesPerSecond int64) int64 { return max(bytesPerSecond/100, 64<<10) }
func limit(bytesPerSecond int64) int64  { return max(bytesPerSecond/10, 128<<10) }

// Link is what a NetworkChaos pair acts on: the runner pod's egress towards the path's remote side.
type Link struct {
	Namespace string
	// Name prefixes the objects' names ("-delay", "-bandwidth").
	Name string
	// Labels and Owner mark the objects as the benchmark's.
	Labels map[string]string
	Owner  metav1.OwnerReference
	// Source selects the runner pod. The delay acts only on what the runner sends to the remote
	// side: ExternalTargets (the addresses the runner pod sends to: a Service's cluster IP, which
	// kube-proxy translates only after the pod's own qdisc, or an outside host), else the pods
	// Target selects in TargetNamespace (a headless Service's).
	Source          map[string]string
	Target          map[string]string
	TargetNamespace string
	ExternalTargets []string
	// Remote selects, in RemoteNamespace, the pods of the far end (a Service's pods): chaos-mesh
	// shapes only the egress of the pods it selects, so the bandwidth of what comes back to the
	// runner (query results, a COPY) is their egress. None for a far end outside the cluster.
	Remote          map[string]string
	RemoteNamespace string
	// RTT and Jitter are added on the way out (direction to: the round trip grows by the
	// latency); BitsPerSecond caps the runner's egress.
	RTT, Jitter   time.Duration
	BitsPerSecond int64
}

// The suffixes of a link's objects' names: one object per action and side (chaos-mesh takes one
// action per object and acts on the pods it selects).
const (
	DelaySuffix         = "-delay"
	BandwidthSuffix     = "-bandwidth"
	BandwidthDownSuffix = "-bandwidth-down"
)

// ObjectName is the name of a run's object with one of Suffixes, kept within a DNS label.
func ObjectName(job, suffix string) string { return benchv1.BoundedName(job + suffix) }

// Suffixes are every suffix Objects may use.
var Suffixes = []string{DelaySuffix, BandwidthSuffix, BandwidthDownSuffix}

// Objects are the link's NetworkChaos objects: the delay on the runner's way out, the bandwidth
// of the runner's egress, and the bandwidth of the far end's egress when its pods are known.
func (l Link) Objects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	if l.RTT > 0 {
		out = append(out, l.object(DelaySuffix, "delay", l.Namespace, l.Source, map[string]any{
			"latency": l.RTT.String(), "jitter": l.Jitter.String(), "correlation": "0"}))
	}
	if l.BitsPerSecond > 0 {
		bytes := l.BitsPerSecond / 8
		params := map[string]any{"rate": Rate(l.BitsPerSecond), "buffer": buffer(bytes), "limit": limit(bytes)}
		out = append(out, l.object(BandwidthSuffix, "bandwidth", l.Namespace, l.Source, params))
		if len(l.Remote) > 0 {
			out = append(out, l.object(BandwidthDownSuffix, "bandwidth", cmp.Or(l.RemoteNamespace, l.Namespace), l.Remote, params))
		}
	}
	return out
}

func (l Link) object(suffix, action, namespace string, pods map[string]string, params map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(NetworkChaosGVK)
	o.SetNamespace(l.Namespace)
	o.SetName(ObjectName(l.Name, suffix))
	o.SetLabels(l.Labels)
	o.SetOwnerReferences([]metav1.OwnerReference{l.Owner})
	spec := map[string]any{
		"action":    action,
		"mode":      "all",
		"selector":  selector(namespace, pods),
		"direction": "to",
		action:      params,
	}
	switch {
	case action == "bandwidth":
		// No target: chaos-mesh would filter the limited traffic with prio bands and ipsets,
		// which kernels without sch_prio refuse; the runner pod's egress is its path anyway,
		// and the far end's pods are shaped as a whole (the benchmark has its server to itself).
	case len(l.ExternalTargets) > 0:
		spec["externalTargets"] = toAny(l.ExternalTargets)
	default:
		spec["target"] = map[string]any{"mode": "all", "selector": selector(cmp.Or(l.TargetNamespace, l.Namespace), l.Target)}
	}
	o.Object["spec"] = spec
	return o
}

func selector(namespace string, labels map[string]string) map[string]any {
	ls := map[string]any{}
	for k, v := range labels {
		ls[k] = v
	}
	return map[string]any{"namespaces": []any{namespace}, "labelSelectors": ls}
}

func toAny(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
