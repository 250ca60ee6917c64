package benchmark

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// Failures whose cause may lie on the path rather than in the server: pgbench saw its connection
// lost or stalled, or the pod ended without a report. What changed on the path while the run went
// (pathEvidence) names the cause instead.
var pathFailures = map[string]bool{
	conditions.ReasonConnectionLost: true, conditions.ReasonPgbenchError: true, conditions.ReasonStalled: true,
	conditions.ReasonJobFailed: true, conditions.ReasonServerUnreachable: true,
}

// blame refines a failed run's reason and message from what the operator can see changed on its
// path while it ran: a sidecar of the runner pod (an ssh tunnel, a PgBouncer, the link emulator)
// that restarted, or a peer's pod (the SSH gateway, a shared pooler) that was replaced or
// restarted, becomes the failure of that part (TunnelDown, PoolerUnavailable,
// NetworkEmulationFailed); a CloudNativePG server's pod that did is added to the message.
// pgbench's own words stay in the message.
func (r *TunnelBenchmarkReconciler) blame(ctx context.Context, tb *benchv1.TunnelBenchmark, job *batchv1.Job,
	pods []corev1.Pod, s step, reason, message string) (string, string) {
	if !pathFailures[reason] {
		return reason, message
	}
	started := job.CreationTimestamp.Time
	if job.Status.StartTime != nil {
		started = job.Status.StartTime.Time
	}
	// The strongest evidence first: a sidecar the kubelet restarted, a peer's pod replaced or
	// restarted; then a sidecar that ended with the runner, which a peer's death can also cause.
	part, evidence := sidecarRestarts(pods)
	for _, sel := range peerPodSelectors(s.peers) {
		if evidence != "" {
			break
		}
		part, evidence = sel.part, r.podsChangedSince(ctx, tb.Namespace, sel.labels, sel.what, started)
	}
	if evidence == "" {
		part, evidence = sidecarDied(pods)
	}
	if broken := transport.BrokenReason(s.transport, part); evidence != "" && broken != "" {
		return broken, fmt.Sprintf("%s (%s)", evidence, message)
	}
	if cluster := tb.Spec.Server.CNPGClusterName(tb); cluster != "" {
		if e := r.podsChangedSince(ctx, tb.Namespace, map[string]string{cnpgClusterLabel: cluster},
			"CloudNativePG Cluster "+cluster, started); e != "" {
			return reason, fmt.Sprintf("%s; %s", message, e)
		}
	}
	return reason, message
}

// cnpgClusterLabel is the label CloudNativePG puts on a Cluster's instance pods.
const cnpgClusterLabel = "cnpg.io/cluster"

// cnpgPoolerLabel is the label CloudNativePG puts on a Pooler's pods.
const cnpgPoolerLabel = "cnpg.io/poolerName"

// sidecarRestarts names the sidecar of the runner pod that restarted during the run and says so,
// "" when none did: the kubelet restarts a dead sidecar, so its death shows in its restart count.
func sidecarRestarts(pods []corev1.Pod) (container, evidence string) {
	for _, p := range pods {
		for _, cs := range p.Status.InitContainerStatuses {
			if cs.RestartCount > 0 {
				return cs.Name, fmt.Sprintf("the runner pod's sidecar %s restarted during the run%s", cs.Name, lastExit(cs))
			}
		}
	}
	return "", ""
}

// sidecarDied names a sidecar that died with the run before the kubelet could restart it (the
// runner's container failed at once, its connections closed, and the pod ended): one that ended
// out of memory, or killed (SIGKILL) no later than the runner's container, or ended, however,
// before it. The kubelet stops sidecars only after the runner's container, with SIGTERM, and
// kills one that outlives its grace period: that one ends later, and is not blamed.
func sidecarDied(pods []corev1.Pod) (container, evidence string) {
	for _, p := range pods {
		runnerEnded := containerFinished(p.Status.ContainerStatuses, runspec.RunnerContainerName)
		for _, cs := range p.Status.InitContainerStatuses {
			t := cs.State.Terminated
			if t == nil {
				continue
			}
			withRunner := !runnerEnded.IsZero() && !t.FinishedAt.After(runnerEnded)
			before := !runnerEnded.IsZero() && t.FinishedAt.Time.Before(runnerEnded)
			if t.Reason == "OOMKilled" || (withRunner && t.ExitCode == exitKilled) || before {
				return cs.Name, fmt.Sprintf("the runner pod's sidecar %s died during the run (it ended %s, exit code %d)",
					cs.Name, t.Reason, t.ExitCode)
			}
		}
	}
	return "", ""
}

// exitKilled is a container's exit code after SIGKILL (128 + 9).
const exitKilled = 137

// containerFinished is when the named container ended, zero while it runs or when it is absent.
func containerFinished(statuses []corev1.ContainerStatus, name string) time.Time {
	for _, cs := range statuses {
		if cs.Name == name && cs.State.Terminated != nil {
			return cs.State.Terminated.FinishedAt.Time
		}
	}
	return time.Time{}
}

func lastExit(cs corev1.ContainerStatus) string {
	if t := cs.LastTerminationState.Terminated; t != nil {
		return fmt.Sprintf(" (it ended %s, exit code %d)", t.Reason, t.ExitCode)
	}
	return ""
}

// podSelector is the pods of one peer, the part of the path they are (transport.BrokenReason) and what to
// call them.
type podSelector struct {
	labels     map[string]string
	part, what string
}

// peerPodSelectors are the pods serving a run's path: its peers' Deployments (the SSH gateway, a
// PgBouncer) and CloudNativePG Poolers.
func peerPodSelectors(peers []transport.Peer) []podSelector {
	var out []podSelector
	for _, p := range peers {
		switch o := p.Object.(type) {
		case *appsv1.Deployment:
			if o.Spec.Selector != nil {
				part := o.Labels[benchv1.LabelComponent]
				out = append(out, podSelector{labels: o.Spec.Selector.MatchLabels, part: part,
					what: fmt.Sprintf("%s %s", part, o.Name)})
			}
		case *unstructured.Unstructured:
			if o.GroupVersionKind() == specs.CNPGPoolerGVK {
				out = append(out, podSelector{labels: map[string]string{cnpgPoolerLabel: o.GetName()},
					part: o.GetLabels()[benchv1.LabelComponent], what: "CloudNativePG Pooler " + o.GetName()})
			}
		}
	}
	return out
}

// podsChangedSince says which pod with the labels was created or had a container restart at or
// after since, or that none is left; "" when they all ran unchanged. The API keeps these times to
// the second, so a change within the run's first second counts: a peer's pod is Available, hence
// older, before a run's Job is created.
func (r *TunnelBenchmarkReconciler) podsChangedSince(ctx context.Context, namespace string, labels map[string]string,
	what string, since time.Time) string {
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		log.FromContext(ctx).Error(err, "Cannot list pods", "labels", labels)
		return ""
	}
	if len(pods.Items) == 0 {
		return fmt.Sprintf("no pod of %s is left", what)
	}
	for _, p := range pods.Items {
		if !p.DeletionTimestamp.IsZero() {
			return fmt.Sprintf("%s's pod %s is being deleted", what, p.Name)
		}
		if !p.CreationTimestamp.Time.Before(since) {
			return fmt.Sprintf("%s's pod was replaced during the run (pod %s is new)", what, p.Name)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.LastTerminationState.Terminated; t != nil && !t.FinishedAt.Time.Before(since) {
				return fmt.Sprintf("%s's pod %s restarted during the run (container %s ended %s, exit code %d)",
					what, p.Name, cs.Name, t.Reason, t.ExitCode)
			}
		}
	}
	return ""
}
