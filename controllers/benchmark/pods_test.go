package benchmark

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
)

func TestJudgePods(t *testing.T) {
	now := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	pod := func(mutate func(*corev1.Pod)) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
		mutate(&p)
		return p
	}
	pods := func(mutate ...func(*corev1.Pod)) corev1.Pod {
		return pod(func(p *corev1.Pod) {
			for _, m := range mutate {
				m(p)
			}
		})
	}
	unschedulable := func(since time.Duration) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 Insufficient cpu.",
				LastTransitionTime: metav1.NewTime(now.Add(-since))}}
		}
	}
	crashing := func(restarts int32) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "tunnel-0", RestartCount: restarts,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					Reason: "Error", ExitCode: 255, Message: "Connection refused"}}}}
		}
	}
	requesting := func(cpu string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "runner", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("128Mi")}}})
		}
	}
	sidecar := func(cpu string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "tunnel-0",
				RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("128Mi")}}})
		}
	}
	node := func(cpu string) func() []corev1.ResourceList {
		return func() []corev1.ResourceList {
			return []corev1.ResourceList{{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi")}}
		}
	}
	tests := []struct {
		name     string
		pods     []corev1.Pod
		reason   string
		problem  []string
		waiting  []string
		progress bool
		nodes    func() []corev1.ResourceList
	}{
		{"running", []corev1.Pod{pod(func(p *corev1.Pod) {})}, "", nil, nil, true, nil},
		{"image cannot be pulled", []corev1.Pod{pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "runner", State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "back-off"}}}}
		})}, "", []string{"cannot start its runner container: ImagePullBackOff"}, nil, false, nil},
		{"a sidecar restarting twice is a slow start", []corev1.Pod{pod(crashing(2))}, "", nil, nil, true, nil},
		{"a sidecar that keeps crashing", []corev1.Pod{pod(crashing(3))}, "",
			[]string{"tunnel-0 container keeps crashing (restarted 3 times; last exit: Error (code 255) Connection refused)",
				"kubectl logs p -c tunnel-0 --previous"}, nil, false, nil},
		{"waiting for a node, within the wait", []corev1.Pod{pod(unschedulable(30 * time.Second))}, "", nil,
			[]string{"waits for a node (30s so far, up to 2m0s): 0/1 nodes are available: 1 Insufficient cpu."}, false, nil},
		{"no node for longer than the wait", []corev1.Pod{pod(unschedulable(3 * time.Minute))}, conditions.ReasonUnschedulable,
			[]string{"could not be scheduled for 3m0s: 0/1 nodes are available: 1 Insufficient cpu."}, nil, false, nil},
		// The nodes known: a pod that fits an empty node waits for the CPU other pods hold, past
		// the bound; one that fits none fails at once.
		{"short of CPU others hold, for longer than the wait", []corev1.Pod{pods(unschedulable(10*time.Minute), requesting("500m"))},
			"", nil, []string{"waits for CPU or memory that other pods hold (10m0s so far, up to 15m0s"}, false, node("2")},
		// It holds its server's place meanwhile: not for hours (a hostage of the server's queue).
		{"short of CPU others hold, for longer than the resource wait", []corev1.Pod{pods(unschedulable(16*time.Minute),
			requesting("1990m"))}, conditions.ReasonUnschedulable, []string{"waited 16m0s for CPU or memory that other pods hold, " +
			"holding its server's place"}, nil, false, node("2")},
		{"more CPU than any node has", []corev1.Pod{pods(unschedulable(time.Second), requesting("1500m"), sidecar("600m"))},
			conditions.ReasonUnschedulable, []string{"requests 2100m CPU and 256Mi of memory, more than any node allocates even empty " +
				"(nodes allocate 2 CPU and 8Gi)", "lower spec.runner.resources"}, nil, false, node("2")},
		{"the nodes cannot be read: the bounded wait", []corev1.Pod{pods(unschedulable(3*time.Minute), requesting("500m"))},
			conditions.ReasonUnschedulable, []string{"could not be scheduled for 3m0s"}, nil, false, func() []corev1.ResourceList { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := judgePods(tt.pods, "", now, podWaits{unschedulable: 2 * time.Minute, resources: DefaultResourceWait}, tt.nodes)
			if st.Reason != tt.reason {
				t.Errorf("reason %q, want %q", st.Reason, tt.reason)
			}
			if tt.progress && (st.Problem != "" || st.Waiting != "") {
				t.Errorf("a progressing pod judged %+v", st)
			}
			for _, want := range tt.problem {
				if !strings.Contains(st.Problem, want) {
					t.Errorf("problem %q lacks %q", st.Problem, want)
				}
			}
			for _, want := range tt.waiting {
				if !strings.Contains(st.Waiting, want) || st.Problem != "" {
					t.Errorf("waiting %q (problem %q) lacks %q", st.Waiting, st.Problem, want)
				}
			}
		})
	}
}
