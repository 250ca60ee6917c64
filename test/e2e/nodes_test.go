//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

// secondNodeTaint keeps every pod but the placement cases' off the local cluster's second node
// (hack/second-node.sh).
const secondNodeTaint = "tunnelbench.io/second-node"

// acrossNodes, on a cluster with a second node (E2E_SECOND_NODE): two runner pods that tolerate
// it are spread one a node by the operator's default spread and still add up (each pod's 2
// clients of a 10 ms sleep make what the sleep allows, checkSleepPhysics, and the run is their
// sum); a runner pinned to the second node reaches the server on the first across the nodes'
// routing, its runs say so (runner and server nodes), and no SharedNode warning is raised for it.
func acrossNodes(t *testing.T, ns string, pg *fixture.Postgres) {
	second := os.Getenv("E2E_SECOND_NODE")
	if second == "" {
		t.Skip("no second node (E2E_SECOND_NODE): the local cluster's is hack/second-node.sh")
	}
	sleeping := func(name string) *benchv1.TunnelBenchmark {
		tb := benchmark(ns, name, pg, fixture.CredentialsSecret)
		tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}
		tb.Spec.Load.Builtin, tb.Spec.Load.Script, tb.Spec.Load.Protocol = "", "\\sleep 10 ms\n", benchv1.Protocol("simple")
		tb.Spec.Load.Clients, tb.Spec.Load.Threads, tb.Spec.Load.Repetitions = 4, 2, 2
		tb.Spec.Load.Duration = &metav1.Duration{Duration: 3 * time.Second}
		tb.Spec.Runner.Tolerations = []corev1.Toleration{{Key: secondNodeTaint, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoSchedule}}
		return tb
	}

	spread := sleeping("spread-over-nodes")
	spread.Spec.Runner.Pods = 2
	end := complete(t, spread, 5*time.Minute)
	for _, run := range end.Status.Result("direct").Runs {
		t.Logf("spread run %d: %.1f tps, pods %+v", run.Round, run.TPS, run.Pods)
		if len(run.Pods) != 2 || run.Pods[0].Node == run.Pods[1].Node || (run.Pods[0].Node != second && run.Pods[1].Node != second) {
			t.Errorf("run %d: pods %+v, want one on each node", run.Round, run.Pods)
		}
		var sum float64
		for _, p := range run.Pods {
			checkSleepPhysics(t, fmt.Sprintf("spread run %d pod %d", run.Round, p.Index), p.TPS, p.LatencyAvgMs, 2)
			sum += p.TPS
		}
		if math.Abs(run.TPS-sum) > 0.02*sum {
			t.Errorf("run %d: %.1f tps over two nodes, the pods' sum is %.1f", run.Round, run.TPS, sum)
		}
	}

	apart := sleeping("runner-on-the-second-node")
	apart.Spec.Runner.NodeSelector = map[string]string{corev1.LabelHostname: second}
	end = complete(t, apart, 5*time.Minute)
	for _, run := range end.Status.Result("direct").Runs {
		t.Logf("apart run %d: %.1f tps, runner on %s, server on %s", run.Round, run.TPS, run.Node, run.ServerNode)
		if run.Node != second || run.ServerNode == "" || run.ServerNode == second {
			t.Errorf("run %d: runner on %q, server on %q; want the runner alone on %s", run.Round, run.Node, run.ServerNode, second)
		}
		checkSleepPhysics(t, fmt.Sprintf("apart run %d", run.Round), run.TPS, run.LatencyAvgMs, 4)
	}
	if c := meta.FindStatusCondition(end.Status.Conditions, "SharedNode"); c != nil && c.Status == metav1.ConditionTrue {
		t.Errorf("a runner on another node than the server's warned %s: %s", c.Reason, c.Message)
	}
}

// podsFromBeforeTerminate: pods made before the second node joined still terminate. Starting a node
// once ran `ip netns add` on the host, which bound /run/netns over itself and hid the namespace
// files of every pod already running: the kubelet could never remove them, those pods stayed
// Terminating for good (the demo's PostgreSQL scaled to zero, a replaced operator pod) and held the
// node's CPU. hack/e2e.sh starts a pause pod before the second node (E2E_POD_FROM_BEFORE); it is
// deleted here, and no pod made before the second node may remain Terminating.
func podsFromBeforeTerminate(t *testing.T) {
	before, second := os.Getenv("E2E_POD_FROM_BEFORE"), os.Getenv("E2E_SECOND_NODE")
	if before == "" || second == "" {
		t.Skip("no pod from before the second node (E2E_POD_FROM_BEFORE): hack/e2e.sh makes one when it starts the node")
	}
	node := &corev1.Node{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: second}, node); err != nil {
		t.Fatal(err)
	}
	namespace, name, _ := strings.Cut(before, "/")
	pod := &corev1.Pod{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	if !pod.CreationTimestamp.Before(&node.CreationTimestamp) {
		t.Fatalf("pod %s was made at %s, not before the node %s (%s)", before, pod.CreationTimestamp, second,
			node.CreationTimestamp)
	}
	start := time.Now()
	if err := k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 2*time.Minute, 250*time.Millisecond, "the pod from before the second node to go", func() error {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("%s is still there", before)
	})
	t.Logf("%s gone %.2f s after its deletion", before, time.Since(start).Seconds())
	poll.Until(t, 3*time.Minute, time.Second, "every pod made before the second node and deleted to go", func() error {
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods); err != nil {
			return err
		}
		var stuck []string
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil && p.CreationTimestamp.Before(&node.CreationTimestamp) &&
				time.Since(p.DeletionTimestamp.Time) > 30*time.Second {
				stuck = append(stuck, p.Namespace+"/"+p.Name)
			}
		}
		if len(stuck) > 0 {
			return fmt.Errorf("still terminating 30 s after their deletion: %v", stuck)
		}
		return nil
	})
	t.Logf("no pod from before the second node left terminating, %.2f s after the deletion", time.Since(start).Seconds())
}
