package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/chaosmesh"
)

// chaos-mesh's admission webhook checks a patch (dropping its finalizer) as an update: both verbs.
// +kubebuilder:rbac:groups=chaos-mesh.org,resources=networkchaos,verbs=get;list;create;delete;patch;update

// DefaultInjectionWait bounds how long a run waits for chaos-mesh to inject its link once the
// runner pod runs. chaos-mesh injects within seconds when its daemon runs on the node; a failure
// it reports ends the wait at once.
const DefaultInjectionWait = 90 * time.Second

// LinkComponent marks the NetworkChaos objects of a run's chaos-mesh link.
const LinkComponent = "link"

// jobNameLabel is the label the Job controller puts on a Job's pods.
const jobNameLabel = "batch.kubernetes.io/job-name"

// chaosNotInstalled is the problem of a chaos-mesh link in a cluster without chaos-mesh.
const chaosNotInstalled = "chaos-mesh is not installed in this cluster (no NetworkChaos kind): install it, " +
	"or use network.emulator: userspace, which needs nothing from the cluster"

// emulateChaosLink puts a run's chaos-mesh link in place once its runner pod runs: the NetworkChaos
// objects are created (peers of the run), awaited until chaos-mesh reports them injected, and then
// the runner, which waits for it before its first connection (runspec.Run.AwaitLink), is told
// through its result ConfigMap. A failure chaos-mesh reports is a problem at once, quoted.
func (r *TunnelBenchmarkReconciler) emulateChaosLink(ctx context.Context, tb *benchv1.TunnelBenchmark, transportName string,
	link benchv1.Link, hop transport.Hop, seen observedStep) error {
	if seen.job == nil || !runnerRunning(seen.pods) || seen.data[runspec.LinkInjectedKey] == runspec.LinkInjected {
		return nil
	}
	jobName := seen.job.Name
	peers, err := r.chaosLinkPeers(ctx, tb, transportName, link, hop, jobName)
	if err != nil {
		return err
	}
	// Every object at once (not one after the other, as a transport's peers): each is injected
	// independently of the others. Until all are, the run goes on waiting (the runner waits too).
	all := true
	for _, p := range peers {
		ready, err := r.ensurePeer(ctx, tb, p)
		if err != nil {
			return err
		}
		all = all && ready
	}
	if !all {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"data": map[string]string{runspec.LinkInjectedKey: runspec.LinkInjected}})
	if err != nil {
		return err
	}
	result := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tb.Namespace, Name: jobName}}
	if err := r.Patch(ctx, result, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("cannot tell the runner that its link is in place: %w", err)
	}
	r.event(tb, corev1.EventTypeNormal, conditions.ReasonLinkInjected, "Emulate", "chaos-mesh injected the link of Job %s", jobName)
	return nil
}

// runnerRunning reports whether a Job's runner pod runs: chaos-mesh acts on a pod's network
// namespace, which exists once the pod runs (its native sidecars started before the runner).
func runnerRunning(pods []corev1.Pod) bool {
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp.IsZero() {
			return true
		}
	}
	return false
}

// chaosLinkPeers are a run's NetworkChaos objects: they select the run's pod by its Job, and the
// delay acts towards the hop's far end only.
func (r *TunnelBenchmarkReconciler) chaosLinkPeers(ctx context.Context, tb *benchv1.TunnelBenchmark, transportName string,
	link benchv1.Link, hop transport.Hop, jobName string) ([]transport.Peer, error) {
	meta := specs.OwnedMeta(tb, jobName, LinkComponent, transportName)
	l := chaosmesh.Link{Namespace: tb.Namespace, Name: jobName, Labels: meta.Labels, Owner: meta.OwnerReferences[0],
		Source: map[string]string{jobNameLabel: jobName}, RTT: link.RTT, Jitter: link.Jitter, BitsPerSecond: link.BitsPerSecond}
	if link.Emulated() {
		far, err := r.farEnd(ctx, tb.Namespace, hop.Host)
		if err != nil {
			return nil, err
		}
		l.ExternalTargets, l.Target, l.TargetNamespace = far.addresses, far.pods, far.namespace
		if len(far.addresses) > 0 {
			// The delay acts on the addresses the runner sends to; the far end's pods, when
			// known, are the source of the way back.
			l.Target = nil
		}
		l.Remote, l.RemoteNamespace = far.pods, far.namespace
	}
	wait := orDefault(r.InjectionWait, DefaultInjectionWait)
	var peers []transport.Peer
	for _, o := range l.Objects() {
		peers = append(peers, transport.Peer{Object: o, NotInstalled: chaosNotInstalled, Ready: injected(wait),
			Created: func() (string, string) {
				return "NetworkChaosCreated", fmt.Sprintf("Created NetworkChaos %s for the link of Job %s", o.GetName(), jobName)
			}})
	}
	return peers, nil
}

// injected judges a NetworkChaos by what chaos-mesh reports: ready once injected into the runner
// pod, a problem as soon as chaos-mesh reports a failure (quoted) or after wait without either.
func injected(wait time.Duration) transport.Readiness {
	return func(_ context.Context, c transport.Cluster, stored client.Object) (transport.Status, error) {
		u, ok := stored.(*unstructured.Unstructured)
		if !ok {
			return transport.Status{}, fmt.Errorf("NetworkChaos %s read as %T", stored.GetName(), stored)
		}
		inj := chaosmesh.InjectionOf(u)
		switch {
		case inj.Injected:
			return transport.Status{Ready: true}, nil
		case inj.Failure != "":
			return transport.Status{Reason: conditions.ReasonNetworkEmulationFailed, Problem: fmt.Sprintf(
				"chaos-mesh could not inject NetworkChaos %s: %s%s", u.GetName(), inj.Failure, injectionHint(u, inj.Failure))}, nil
		}
		if age := c.Now().Sub(u.GetCreationTimestamp().Time); age >= wait {
			return transport.Status{Reason: conditions.ReasonNetworkEmulationFailed, Problem: fmt.Sprintf(
				"chaos-mesh did not inject NetworkChaos %s within %s (still waiting for %s): check that chaos-mesh's "+
					"controller and its daemon on the runner's node run", u.GetName(), wait, inj.Waiting)}, nil
		}
		return transport.Status{Waiting: inj.Waiting}, nil
	}
}

// injectionHint says what to do about a failure chaos-mesh reports, when the cause is known.
// chaos-mesh keeps tc's own words in its daemon's log ("Specified qdisc kind is unknown") and
// reports only that it could not set the pod's tc rules: for a delay, the usual cause is a kernel
// without netem.
func injectionHint(u *unstructured.Unstructured, failure string) string {
	action, _, _ := unstructured.NestedString(u.Object, "spec", "action")
	if action == "delay" && (strings.Contains(failure, "unable to set tcs") || strings.Contains(failure, "qdisc kind is unknown")) {
		return "; a delay needs the netem queueing discipline (kernel module sch_netem) on the runner's node, which " +
			"kernels built without it lack (chaos-daemon's log on that node has tc's own message): load it there, or " +
			"use network.emulator: userspace"
	}
	return ""
}

// farEnd is the far end of a link as chaos-mesh can select it.
type farEnd struct {
	// addresses are where the runner pod's packets go: a Service's cluster IPs, which are the
	// packets' destination in the pod (kube-proxy translates them on the node, after the pod's
	// queueing discipline), or a host outside the cluster as itself.
	addresses []string
	// pods select, in namespace, the pods behind a Service of the cluster.
	pods      map[string]string
	namespace string
}

// farEnd resolves a hop's host: a Service of the cluster (name.namespace.svc...) by its cluster
// IPs and its pods, any other host as itself.
func (r *TunnelBenchmarkReconciler) farEnd(ctx context.Context, namespace, host string) (farEnd, error) {
	name, ns, ok := chaosmesh.ServiceOf(host, namespace)
	if !ok {
		return farEnd{addresses: []string{host}}, nil
	}
	svc := &corev1.Service{}
	switch err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc); {
	case apierrors.IsNotFound(err):
		return farEnd{addresses: []string{host}}, nil
	case err != nil:
		return farEnd{}, fmt.Errorf("cannot get Service %s/%s, the far end of the link: %w", ns, name, err)
	}
	far := farEnd{pods: svc.Spec.Selector, namespace: ns}
	for _, ip := range svc.Spec.ClusterIPs {
		if ip != corev1.ClusterIPNone {
			far.addresses = append(far.addresses, ip)
		}
	}
	if len(far.addresses) == 0 && len(far.pods) == 0 {
		far.addresses = []string{host}
	}
	return far, nil
}

// removeChaosLink removes a run's NetworkChaos objects once the run is over (removeNetworkChaos).
func (r *TunnelBenchmarkReconciler) removeChaosLink(ctx context.Context, tb *benchv1.TunnelBenchmark, jobName string) {
	for _, suffix := range chaosmesh.Suffixes {
		o := &metav1.PartialObjectMetadata{}
		o.SetGroupVersionKind(chaosmesh.NetworkChaosGVK)
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: chaosmesh.ObjectName(jobName, suffix)}, o)
		if err != nil || !metav1.IsControlledBy(o, tb) {
			continue
		}
		r.removeNetworkChaos(ctx, o)
	}
}

// removeNetworkChaos deletes a NetworkChaos. chaos-mesh's finalizer holds it until chaos-mesh has
// undone the injection in the pods it selected; the operator drops that finalizer itself where
// there is nothing chaos-mesh could undo, or nothing left to undo: on the runner's side (the run is
// over, its pod has ended and its network namespace went with it: chaos-mesh would retry forever)
// and where no injection remains (chaosmesh.Undone: a failed injection holds its finalizer too).
// The far end's pods (the server's, the gateway's) live on: there the finalizer stays until
// chaos-mesh has taken its limit off them.
func (r *TunnelBenchmarkReconciler) removeNetworkChaos(ctx context.Context, found *metav1.PartialObjectMetadata) {
	// Unstructured, not metadata: the API answers the delete of an object a finalizer holds
	// with the object itself, which a metadata request cannot decode without chaos-mesh's types.
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(chaosmesh.NetworkChaosGVK)
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: found.Namespace, Name: found.Name}, o)
	if err != nil || o.GetUID() != found.UID {
		return
	}
	uid := o.GetUID()
	if o.GetDeletionTimestamp() == nil {
		err := r.Delete(ctx, o, client.Preconditions{UID: &uid})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return
		}
		if err != nil {
			log.FromContext(ctx).Error(err, "Cannot remove a NetworkChaos; it goes with the benchmark", "networkchaos", o.GetName())
			return
		}
	}
	runnerSide := false
	if sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "labelSelectors"); sel[jobNameLabel] != "" {
		runnerSide = true
	}
	if !runnerSide && !chaosmesh.Undone(o) {
		return
	}
	// The UID in the patch is a precondition: never the finalizers of another object of that name.
	patch := fmt.Sprintf(`{"metadata":{"uid":%q,"finalizers":null}}`, uid)
	if err := r.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil &&
		!apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		log.FromContext(ctx).Error(err, "Cannot drop chaos-mesh's finalizer; the NetworkChaos goes when chaos-mesh lets it",
			"networkchaos", o.GetName())
	}
}
