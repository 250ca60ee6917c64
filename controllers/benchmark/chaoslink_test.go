package benchmark

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/transport/chaosmesh"
)

// TestChaosMeshLink plays chaos-mesh against the operator (envtest has chaos-mesh's NetworkChaos
// CRD, not its controller): the NetworkChaos objects come only once the runner pod runs, the
// runner is told once chaos-mesh reports them injected, and they go, finalizer and all, when the
// run ends: the runner's side at once (its pod has ended), the far end's once chaos-mesh took its
// limit off the server's pod. A failure chaos-mesh reports fails the benchmark at once, quoting it.
func TestChaosMeshLink(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	ctx := context.Background()
	// The server's Service: the delay acts on what the runner sends to its cluster IP.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-rw"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"cnpg.io/cluster": "pg"}, Ports: []corev1.ServicePort{{Port: 5432}}}}
	if err := testClient.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	startOperator(t, func(r *TunnelBenchmarkReconciler) { r.InjectionWait = 20 * time.Second })
	wan := &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 10 * time.Millisecond}, Bandwidth: "50Mbit",
		Emulator: benchv1.EmulatorChaosMesh}

	t.Run("injected", func(t *testing.T) {
		tb := newBenchmark(ns, "chaos", benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect})
		tb.Spec.Network = wan
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
		job := waitForJob(t, ns, jobName("chaos", "direct"))
		assertArgs(t, job, "--await-link", "--link-rtt=10ms", "--link-bandwidth=50000000")
		if n := len(job.Spec.Template.Spec.InitContainers); n != 0 {
			t.Errorf("a chaos-mesh link adds %d sidecars to the runner pod", n)
		}
		consistently(t, time.Second, "no NetworkChaos before the runner pod runs", func() error {
			if objs := networkChaos(t, ns); len(objs) > 0 {
				return fmt.Errorf("%d NetworkChaos exist", len(objs))
			}
			return nil
		})
		pod := runPod(t, job)
		var objs []unstructured.Unstructured
		eventually(t, 10*time.Second, "the link's NetworkChaos", func() error {
			if objs = networkChaos(t, ns); len(objs) != 3 {
				return fmt.Errorf("%d NetworkChaos", len(objs))
			}
			return nil
		})
		for _, o := range objs {
			if ref := metav1.GetControllerOf(&o); ref == nil || ref.Name != "chaos" {
				t.Errorf("%s is not the benchmark's", o.GetName())
			}
			want := map[string]string{jobNameLabel: job.Name}
			if strings.HasSuffix(o.GetName(), chaosmesh.BandwidthDownSuffix) {
				// The way back: the server Service's pods.
				want = svc.Spec.Selector
			}
			if sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "labelSelectors"); !maps.Equal(sel, want) {
				t.Errorf("%s selects %v, want %v", o.GetName(), sel, want)
			}
		}
		delay := objs[slices.IndexFunc(objs, func(o unstructured.Unstructured) bool { return strings.HasSuffix(o.GetName(), "-delay") })]
		stored := &corev1.Service{}
		if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "pg-rw"}, stored); err != nil {
			t.Fatal(err)
		}
		if ext, _, _ := unstructured.NestedStringSlice(delay.Object, "spec", "externalTargets"); !slices.Equal(ext, stored.Spec.ClusterIPs) {
			t.Errorf("the delay targets %v, not the server Service's cluster IPs %v", ext, stored.Spec.ClusterIPs)
		}
		consistently(t, time.Second, "the runner is not told before chaos-mesh injected", func() error {
			if linkMark(t, job) != "" {
				return fmt.Errorf("the runner was told too early")
			}
			return nil
		})
		for i := range objs {
			playChaosMesh(t, &objs[i], "")
		}
		eventually(t, 10*time.Second, "the runner told", func() error {
			if m := linkMark(t, job); m != runspec.LinkInjected {
				return fmt.Errorf("mark %q", m)
			}
			return nil
		})
		assertEvents(t, ns, "chaos", "NetworkChaosCreated", "LinkInjected")
		// Gone at once, as a kubelet would confirm its stop: a pod left terminating keeps the
		// benchmark's server Lease (unlockServer) and holds the next case's benchmark in the queue.
		if err := testClient.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
		finishJob(t, job, 0, resultReport(350, nil))
		waitForPhase(t, ns, "chaos", benchv1.PhaseCompleted)
		assertLinkRemoved(t, ns, job.Name)
	})

	t.Run("delay refused by the node", func(t *testing.T) {
		tb := newBenchmark(ns, "nonetem", benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect})
		tb.Spec.Network = wan
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
		job := waitForJob(t, ns, jobName("nonetem", "direct"))
		runPod(t, job)
		var objs []unstructured.Unstructured
		eventually(t, 10*time.Second, "the link's NetworkChaos", func() error {
			if objs = networkChaosOf(t, ns, job.Name); len(objs) != 3 {
				return fmt.Errorf("%d NetworkChaos", len(objs))
			}
			return nil
		})
		for i := range objs {
			failure := ""
			if strings.HasSuffix(objs[i].GetName(), "-delay") {
				// chaos-mesh's own words when tc refuses netem (the e2e meets them for real).
				failure = fmt.Sprintf("failed to apply for pod %s/%s: unable to set tcs for pod %[2]s", ns, job.Name+"-running")
			}
			playChaosMesh(t, &objs[i], failure)
		}
		failed := waitForPhase(t, ns, "nonetem", benchv1.PhaseFailed)
		c := assertCondition(t, failed, conditions.Failed, metav1.ConditionTrue, conditions.ReasonNetworkEmulationFailed)
		for _, want := range []string{"transport direct", job.Name + "-delay", "unable to set tcs for pod", "sch_netem",
			"network.emulator: userspace"} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("Failed message %q does not say %q", c.Message, want)
			}
		}
		if linkMark(t, job) != "" {
			t.Error("the runner was told its link is in place")
		}
		assertLinkRemoved(t, ns, job.Name)
	})
}

// assertLinkRemoved waits for a run's NetworkChaos to go: the runner's side despite chaos-mesh's
// finalizer, while the far end's keeps it until chaos-mesh (played here) took its limit off the
// server's pods.
func assertLinkRemoved(t *testing.T, ns, job string) {
	t.Helper()
	var down *unstructured.Unstructured
	eventually(t, 10*time.Second, "the runner's side gone, the far end's deleting", func() error {
		objs := networkChaosOf(t, ns, job)
		if len(objs) != 1 || !strings.HasSuffix(objs[0].GetName(), chaosmesh.BandwidthDownSuffix) ||
			objs[0].GetDeletionTimestamp() == nil {
			return fmt.Errorf("%d NetworkChaos left", len(objs))
		}
		down = &objs[0]
		return nil
	})
	consistently(t, time.Second, "the far end's finalizer kept", func() error {
		if objs := networkChaosOf(t, ns, job); len(objs) != 1 || len(objs[0].GetFinalizers()) == 0 {
			return fmt.Errorf("the far end's NetworkChaos lost chaos-mesh's finalizer before chaos-mesh recovered it")
		}
		return nil
	})
	down.SetFinalizers(nil)
	if err := testClient.Update(context.Background(), down); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the far end's NetworkChaos gone", func() error {
		if objs := networkChaosOf(t, ns, job); len(objs) > 0 {
			return fmt.Errorf("%d NetworkChaos left", len(objs))
		}
		return nil
	})
}

// runPod plays the Job controller and the kubelet: the Job's pod, running.
func runPod(t *testing.T, job *batchv1.Job) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{jobNameLabel: job.Name}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name + "-running", Labels: labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
			Controller: ptr.To(true)}}}, Spec: job.Spec.Template.Spec}
	pod.Spec.NodeName = testNode
	if err := testClient.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning}
	if err := testClient.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// playChaosMesh writes what chaos-mesh writes once it acted on the runner pod: its finalizer and
// the pod's record, injected or failed with chaos-mesh's message.
func playChaosMesh(t *testing.T, o *unstructured.Unstructured, failure string) {
	t.Helper()
	o.SetFinalizers([]string{"chaos-mesh/records"})
	event := map[string]any{"operation": "Apply", "type": "Succeeded", "timestamp": time.Now().UTC().Format(time.RFC3339)}
	injected := "True"
	if failure != "" {
		event["type"], event["message"], injected = "Failed", failure, "False"
	}
	o.Object["status"] = map[string]any{
		"conditions": []any{
			map[string]any{"type": "Selected", "status": "True"},
			map[string]any{"type": "AllInjected", "status": injected},
		},
		"experiment": map[string]any{"desiredPhase": "Run", "containerRecords": []any{map[string]any{
			"id": o.GetNamespace() + "/runner", "phase": "Injected", "selectorKey": ".", "injectedCount": int64(1),
			"recoveredCount": int64(0), "events": []any{event}}}},
	}
	if err := testClient.Update(context.Background(), o); err != nil {
		t.Fatalf("cannot play chaos-mesh on %s: %v", o.GetName(), err)
	}
}

func networkChaos(t *testing.T, ns string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(chaosmesh.NetworkChaosGVK.GroupVersion().WithKind("NetworkChaosList"))
	if err := testClient.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func networkChaosOf(t *testing.T, ns, job string) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, o := range networkChaos(t, ns) {
		if strings.HasPrefix(o.GetName(), job+"-") {
			out = append(out, o)
		}
	}
	return out
}

// linkMark is what the operator told the runner of its link in the result ConfigMap.
func linkMark(t *testing.T, job *batchv1.Job) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	err := testClient.Get(context.Background(), types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, cm)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return cm.Data[runspec.LinkInjectedKey]
}
