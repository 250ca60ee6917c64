package benchmark

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/chaosmesh"
)

// provenance records where and with what a transport was measured, as observed: the runner pod's
// node, image and resources, pgbench's version, and the server's node: a CloudNativePG server's
// primary's, or, for an external server that is a Service of the cluster, its pod's.
func (r *TunnelBenchmarkReconciler) provenance(ctx context.Context, tb *benchv1.TunnelBenchmark, pods []corev1.Pod,
	rep *report.Report) *benchv1.Provenance {
	p := &benchv1.Provenance{PgbenchVersion: rep.PgbenchVersion}
	for _, pod := range pods {
		p.Node = pod.Spec.NodeName
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name == runspec.RunnerContainerName {
				p.RunnerImage = cs.ImageID
				if p.RunnerImage == "" {
					p.RunnerImage = cs.Image
				}
			}
		}
		for _, c := range pod.Spec.Containers {
			if c.Name == runspec.RunnerContainerName {
				if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
					p.CPURequest = q.String()
				}
				if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
					p.MemoryLimit = q.String()
				}
			}
		}
	}
	if pod, _ := r.serverPod(ctx, tb); pod != nil {
		p.ServerNode = pod.Spec.NodeName
	}
	if p.Node != "" && p.ServerNode != "" {
		p.SharedNode = ptr.To(p.Node == p.ServerNode)
	}
	return p
}

// serverPod is the server's running pod when the operator can see it as one — a CloudNativePG
// server's primary, or the pod behind an external server that is a Service of the cluster with a
// selector — else nil and why not: outside the cluster, or a Service it may not read
// (namespace-scoped mode outside its namespaces).
func (r *TunnelBenchmarkReconciler) serverPod(ctx context.Context, tb *benchv1.TunnelBenchmark) (*corev1.Pod, string) {
	if cluster := tb.Spec.Server.CNPGClusterName(tb); cluster != "" {
		return r.runningPod(ctx, tb.Namespace, client.MatchingLabels{"cnpg.io/cluster": cluster, "cnpg.io/instanceRole": "primary"},
			"CloudNativePG cluster "+cluster+"'s primary")
	}
	e := tb.Spec.Server.External
	if e == nil {
		return nil, "the server is not known yet"
	}
	name, ns, ok := chaosmesh.ServiceOf(e.Host, tb.Namespace)
	if !ok {
		return nil, fmt.Sprintf("the server %s is not a Service of the cluster: its pods cannot be seen", e.Host)
	}
	svc := &corev1.Service{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc); err != nil {
		return nil, fmt.Sprintf("the server's Service %s/%s cannot be read: %v", ns, name, err)
	}
	if len(svc.Spec.Selector) == 0 {
		return nil, fmt.Sprintf("the server's Service %s/%s selects no pods", ns, name)
	}
	return r.runningPod(ctx, ns, client.MatchingLabels(svc.Spec.Selector), "the pod behind Service "+ns+"/"+name)
}

// runningPod is the first pod of namespace with the labels that is placed and has not ended, or
// nil and why not.
func (r *TunnelBenchmarkReconciler) runningPod(ctx context.Context, namespace string, match client.MatchingLabels,
	what string) (*corev1.Pod, string) {
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(namespace), match); err != nil {
		log.FromContext(ctx).V(1).Info("Cannot find the server's pod", "what", what, "err", err)
		return nil, fmt.Sprintf("%s cannot be listed: %v", what, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" && p.DeletionTimestamp.IsZero() && p.Status.Phase != corev1.PodSucceeded &&
			p.Status.Phase != corev1.PodFailed {
			return p, ""
		}
	}
	return nil, what + " is not running"
}

// warnSharedNode sets the SharedNode condition (and a warning once) when a transport's runner ran
// on the server's node: its figures include the CPU the client took from the server.
func (r *TunnelBenchmarkReconciler) warnSharedNode(tb *benchv1.TunnelBenchmark, transport string, p *benchv1.Provenance) {
	if p == nil || p.SharedNode == nil || !*p.SharedNode {
		return
	}
	msg := fmt.Sprintf("the runner of transport %s ran on node %s, the node of the server's primary: the client takes CPU "+
		"from the server it measures; spread them with spec.runner.affinity on a cluster with several nodes", transport, p.Node)
	if !r.hasCondition(tb, conditions.SharedNode, metav1.ConditionTrue, conditions.ReasonSameNode) {
		r.event(tb, corev1.EventTypeWarning, conditions.ReasonSharedNode, "Measure", "%s", msg)
	}
	r.setCondition(tb, conditions.SharedNode, metav1.ConditionTrue, conditions.ReasonSameNode, msg)
}

// peerPod is the transport's peer's running pod (the SSH gateway, a shared PgBouncer: its
// Deployment's; a CloudNativePG Pooler's), nil without one or when it is not found.
func (r *TunnelBenchmarkReconciler) peerPod(ctx context.Context, namespace string, peers []transport.Peer,
	tr transport.Transport) *corev1.Pod {
	if rt, ok := tr.(transport.ReadThroughNodes); ok {
		if _, match, ok := rt.NodeReadPods(); ok {
			pod, _ := r.runningPod(ctx, namespace, match, "the peer's pod")
			return pod
		}
	}
	for _, p := range peers {
		dep, ok := p.Object.(*appsv1.Deployment)
		if !ok || dep.Spec.Selector == nil {
			continue
		}
		if pod, _ := r.runningPod(ctx, dep.Namespace, dep.Spec.Selector.MatchLabels, "Deployment "+dep.Name+"'s pod"); pod != nil {
			return pod
		}
	}
	return nil
}
