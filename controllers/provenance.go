package controllers

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/chaosmesh"
	"github.com/tunnelbench/tunnelbench/internal/report"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
)

// ConditionSharedNode is True when a runner pod ran on the node of the server's pod.
const ConditionSharedNode = "SharedNode"

// provenance records where and with what a transport was measured, as observed: the runner pod's
// node, image and resources, pgbench's version, and the server's node: a CloudNativePG server's
// primary's, or, for an external server that is a Service of the cluster, its pod's.
func (r *TunnelBenchmarkReconciler) provenance(ctx context.Context, tb *benchv1.TunnelBenchmark, job *batchv1.Job,
	rep *report.Report) *benchv1.Provenance {
	p := &benchv1.Provenance{PgbenchVersion: rep.PgbenchVersion}
	for _, pod := range r.jobPods(ctx, job) {
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
	if cluster := tb.Spec.Server.CNPGClusterName(tb); cluster != "" {
		p.ServerNode = r.primaryNode(ctx, tb.Namespace, cluster)
	} else if e := tb.Spec.Server.External; e != nil {
		p.ServerNode = r.serviceNode(ctx, tb.Namespace, e.Host)
	}
	if p.Node != "" && p.ServerNode != "" {
		p.SharedNode = ptr.To(p.Node == p.ServerNode)
	}
	return p
}

// primaryNode is the node of a CloudNativePG cluster's primary pod, or "".
func (r *TunnelBenchmarkReconciler) primaryNode(ctx context.Context, namespace, cluster string) string {
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(namespace),
		client.MatchingLabels{"cnpg.io/cluster": cluster, "cnpg.io/instanceRole": "primary"}); err != nil {
		log.FromContext(ctx).Info("Cannot find the server's primary pod", "cluster", cluster, "err", err)
		return ""
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp.IsZero() {
			return p.Spec.NodeName
		}
	}
	return ""
}

// serviceNode is the node of the running pod behind host when host is a Service of the cluster
// with a selector (an external server the operator can see as pods), or "": outside the cluster,
// or a Service it may not read (namespace-scoped mode outside its namespaces).
func (r *TunnelBenchmarkReconciler) serviceNode(ctx context.Context, namespace, host string) string {
	name, ns, ok := chaosmesh.ServiceOf(host, namespace)
	if !ok {
		return ""
	}
	svc := &corev1.Service{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc); err != nil || len(svc.Spec.Selector) == 0 {
		return ""
	}
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(svc.Spec.Selector)); err != nil {
		log.FromContext(ctx).V(1).Info("Cannot find the server's pods", "service", ns+"/"+name, "err", err)
		return ""
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp.IsZero() && p.Status.Phase == corev1.PodRunning {
			return p.Spec.NodeName
		}
	}
	return ""
}

// warnSharedNode sets the SharedNode condition (and a warning once) when a transport's runner ran
// on the server's node: its figures include the CPU the client took from the server.
func (r *TunnelBenchmarkReconciler) warnSharedNode(tb *benchv1.TunnelBenchmark, transport string, p *benchv1.Provenance) {
	if p == nil || p.SharedNode == nil || !*p.SharedNode {
		return
	}
	msg := fmt.Sprintf("the runner of transport %s ran on node %s, the node of the server's primary: the client takes CPU "+
		"from the server it measures; spread them with spec.runner.affinity on a cluster with several nodes", transport, p.Node)
	if !r.hasCondition(tb, ConditionSharedNode, metav1.ConditionTrue, "SameNode") {
		r.event(tb, corev1.EventTypeWarning, "SharedNode", "Measure", "%s", msg)
	}
	r.setCondition(tb, ConditionSharedNode, metav1.ConditionTrue, "SameNode", msg)
}
