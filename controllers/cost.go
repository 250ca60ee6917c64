package controllers

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/cost"
	"github.com/tunnelbench/tunnelbench/internal/report"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
)

// runCost is what the run's parts consumed, from the runner's report, and the part that ran out
// first: today the client (pgbench and the runner, in the runner container).
func (r *TunnelBenchmarkReconciler) runCost(ctx context.Context, job *batchv1.Job, node string,
	rep *report.Report) ([]benchv1.PartCost, *benchv1.Limiter) {
	if rep.CPU == nil || rep.Result == nil {
		return nil, nil
	}
	parts := []benchv1.PartCost{cost.Part(benchv1.PartClient, rep.CPU, rep.Result.Transactions,
		r.containerCores(ctx, job, runspec.RunnerContainerName, node))}
	return parts, cost.Limiter(parts)
}

// containerCores is the CPU a container of the Job's pod could use: its CPU limit, else the
// allocatable CPU of the node it ran on; 0 when neither is known (namespace-scoped mode cannot
// list nodes).
func (r *TunnelBenchmarkReconciler) containerCores(ctx context.Context, job *batchv1.Job, container, node string) float64 {
	for _, c := range job.Spec.Template.Spec.Containers {
		if q, ok := c.Resources.Limits[corev1.ResourceCPU]; c.Name == container && ok {
			return q.AsApproximateFloat64()
		}
	}
	if node == "" {
		return 0
	}
	list := &corev1.NodeList{}
	if err := r.APIReader.List(ctx, list); err != nil {
		log.FromContext(ctx).V(1).Info("Cannot read the nodes' allocatable CPU; utilization unknown", "err", err)
		return 0
	}
	for _, n := range list.Items {
		if n.Name == node {
			q := n.Status.Allocatable[corev1.ResourceCPU]
			return q.AsApproximateFloat64()
		}
	}
	return 0
}
