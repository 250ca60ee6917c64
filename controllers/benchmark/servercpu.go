package benchmark

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// The server's CPU is sampled like a sidecar's, by the runner at the ends of its measured window,
// through the node reader (the chart's DaemonSet) of the server pod's node, which reads that
// pod's cgroup. The operator only finds the two pods and tells the runner where to ask.

// serverView is what the operator sees of the server: its running pod (nil when it sees none),
// why not, and the node readers.
type serverView struct {
	pod     *corev1.Pod
	noPod   string
	readers []corev1.Pod
}

// observeServer finds the server's pod (a CloudNativePG primary, or the pod behind an external
// server's Service) and, when the operator runs node readers, the readers.
func (r *TunnelBenchmarkReconciler) observeServer(ctx context.Context, tb *benchv1.TunnelBenchmark) serverView {
	var v serverView
	v.pod, v.noPod = r.serverPod(ctx, tb)
	if r.NodeReaderNamespace == "" || v.pod == nil {
		return v
	}
	var err error
	if v.readers, err = r.nodeReaders(ctx); err != nil {
		v.noPod, v.pod = err.Error(), nil
	}
	return v
}

// nodeReaders are the node readers' pods.
func (r *TunnelBenchmarkReconciler) nodeReaders(ctx context.Context) ([]corev1.Pod, error) {
	sel, err := labels.Parse(r.NodeReaderSelector)
	list := &corev1.PodList{}
	if err == nil {
		err = r.APIReader.List(ctx, list, client.InNamespace(r.NodeReaderNamespace), client.MatchingLabelsSelector{Selector: sel})
	}
	if err != nil {
		return nil, fmt.Errorf("the node readers in namespace %s cannot be listed: %w", r.NodeReaderNamespace, err)
	}
	return list.Items, nil
}

// maxNodeReadPods bounds the parts of one peer read through the node readers.
const maxNodeReadPods = 4

// nodeReadParts are the runner's parts for a peer's pods that only the node readers can read (a
// CloudNativePG Pooler's): part, or part-i for several pods; a pod without a ready reader on its
// node is left out.
func (r *TunnelBenchmarkReconciler) nodeReadParts(ctx context.Context, namespace string, tr transport.Transport) []runspec.CPUPart {
	rt, ok := tr.(transport.ReadThroughNodes)
	if !ok || r.NodeReaderNamespace == "" {
		return nil
	}
	part, match, ok := rt.NodeReadPods()
	if !ok {
		return nil
	}
	pods := &corev1.PodList{}
	readers, err := r.nodeReaders(ctx)
	if err == nil {
		err = r.APIReader.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(match))
	}
	if err != nil {
		log.FromContext(ctx).Info("Cannot find the pods to read through the node readers", "part", part, "err", err)
		return nil
	}
	var out []runspec.CPUPart
	for i := range pods.Items {
		p := &pods.Items[i]
		if len(out) == maxNodeReadPods || p.Status.Phase != corev1.PodRunning || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if c, why := r.serverPart(serverView{pod: p, readers: readers}); why == "" {
			out = append(out, c)
		}
	}
	for i := range out {
		out[i].Name = part
		if len(out) > 1 {
			out[i].Name = fmt.Sprintf("%s-%d", part, i)
		}
	}
	return out
}

// serverPart is the runner's part for the server's CPU, or why there is none: decided from what
// was observed alone.
func (r *TunnelBenchmarkReconciler) serverPart(v serverView) (runspec.CPUPart, string) {
	switch {
	case v.pod == nil:
		return runspec.CPUPart{}, v.noPod
	case r.NodeReaderNamespace == "":
		return runspec.CPUPart{}, "the operator runs no node readers (chart value nodeReader.enabled)"
	}
	node := v.pod.Spec.NodeName
	for _, p := range v.readers {
		if p.Spec.NodeName == node && p.Status.PodIP != "" && p.DeletionTimestamp.IsZero() && podReady(&p) {
			return runspec.CPUPart{Name: benchv1.PartServer, Host: p.Status.PodIP, Port: runspec.NodeReaderPort,
				Pod: string(v.pod.UID)}, ""
		}
	}
	return runspec.CPUPart{}, fmt.Sprintf("no ready node reader runs on node %s, the server pod %s's (its DaemonSet in "+
		"namespace %s: a taint it does not tolerate, or a Pod Security level that refuses its read-only hostPath)",
		node, v.pod.Name, r.NodeReaderNamespace)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podCores is what a pod could use: the sum of its containers' CPU limits when each has one, else
// its node's allocatable CPU; 0 when not known (no pod).
func (r *TunnelBenchmarkReconciler) podCores(ctx context.Context, pod *corev1.Pod) float64 {
	if pod == nil {
		return 0
	}
	sum := 0.0
	for _, c := range pod.Spec.Containers {
		q, ok := c.Resources.Limits[corev1.ResourceCPU]
		if !ok {
			return r.nodeCores(ctx, pod.Spec.NodeName)
		}
		sum += q.AsApproximateFloat64()
	}
	return sum
}
