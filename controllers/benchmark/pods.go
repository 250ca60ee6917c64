package benchmark

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// DefaultUnschedulableWait bounds how long a pod of a benchmark may wait for a node to fit on
// before the benchmark fails Unschedulable: capacity may free up (another benchmark ending), but
// waiting for spec.timeout would only end with the wrong advice.
const DefaultUnschedulableWait = 2 * time.Minute

// DefaultResourceWait bounds how long a pod that fits a node, once other pods free the CPU or
// memory they hold, may wait for it. Its benchmark holds its server's place in the queue while
// it waits: unbounded (within spec.timeout, hours), one unschedulable runner kept every other
// benchmark of the server Queued, a hostage. Benchmarks applied together still queue on the
// node's CPU, for this long.
const DefaultResourceWait = 15 * time.Minute

// podWaits are how long a pod may wait for a node: for any reason (unschedulable), and for CPU
// or memory that other pods hold (resources).
type podWaits struct {
	unschedulable, resources time.Duration
}

// stuckWaitingReasons are container states that never resolve by themselves: waiting for them
// would only end at the benchmark's timeout, with a less useful message.
var stuckWaitingReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true,
}

// crashLoopRestarts is how many restarts make a crash-looping sidecar or peer a problem rather
// than a slow start (a tunnel that comes up once its gateway does restarts once or twice).
const crashLoopRestarts = 3

// judgePods judges the pods of a Job or a peer: the first that cannot start by itself is a Problem
// (a container that cannot be created or pulled, one that keeps crashing, a pod no node could take
// for longer than unschedulableWait, reason Unschedulable); a pod that waits for a node within that
// wait is Waiting, quoting the scheduler. A pod short of CPU or memory is judged against the
// nodes' allocatable resources when they are known (nodes): one that fits no node even empty fails
// at once, one that fits waits for what other pods hold up to waits.resources (longer than the
// unschedulable wait), so that benchmarks applied together queue on the node's CPU instead of
// failing, while none holds its server's place for hours.
func judgePods(pods []corev1.Pod, what string, now time.Time, waits podWaits,
	nodes func() []corev1.ResourceList) transport.Status {
	unschedulableWait := waits.unschedulable
	var waiting transport.Status
	for _, p := range pods {
		name := "pod " + p.Name
		if what != "" {
			name = what + " " + name
		}
		statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
		for _, cs := range statuses {
			if w := cs.State.Waiting; w != nil && stuckWaitingReasons[w.Reason] {
				return transport.Status{Problem: fmt.Sprintf("%s cannot start its %s container: %s: %s", name, cs.Name, w.Reason, w.Message)}
			}
			if w := cs.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" && cs.RestartCount >= crashLoopRestarts {
				last := ""
				if t := cs.LastTerminationState.Terminated; t != nil {
					last = fmt.Sprintf("; last exit: %s (code %d) %s", t.Reason, t.ExitCode, t.Message)
				}
				return transport.Status{Problem: fmt.Sprintf("%s: its %s container keeps crashing (restarted %d times%s): "+
					"see `kubectl logs %s -c %s --previous`", name, cs.Name, cs.RestartCount, last, p.Name, cs.Name)}
			}
		}
		for _, c := range p.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
				continue
			}
			waited := now.Sub(c.LastTransitionTime.Time).Truncate(time.Second)
			if strings.Contains(c.Message, "Insufficient") && nodes != nil {
				if known := nodes(); len(known) > 0 {
					requests := podRequests(&p.Spec)
					if !fitsSomeNode(requests, known) {
						return transport.Status{Reason: conditions.ReasonUnschedulable, Problem: fmt.Sprintf(
							"%s requests %s CPU and %s of memory, more than any node allocates even empty (%s): it can never "+
								"be scheduled; lower spec.runner.resources, or ssh.tunnels (each tunnel sidecar requests 100m)",
							name, requests.Cpu(), requests.Memory(), describeNodes(known))}
					}
					if waited >= waits.resources {
						return transport.Status{Reason: conditions.ReasonUnschedulable, Problem: fmt.Sprintf(
							"%s waited %s for CPU or memory that other pods hold, holding its server's place in the queue "+
								"(every other benchmark of that server waits behind it): %s; free capacity, lower "+
								"spec.runner.resources, or run it when the nodes are quieter", name, waited, c.Message)}
					}
					if waiting.Waiting == "" {
						waiting.Waiting = fmt.Sprintf("%s waits for CPU or memory that other pods hold (%s so far, up to %s; it "+
							"fits a node once they end): %s", name, waited, waits.resources, c.Message)
					}
					continue
				}
			}
			if waited >= unschedulableWait {
				return transport.Status{Reason: conditions.ReasonUnschedulable, Problem: fmt.Sprintf(
					"%s could not be scheduled for %s: %s; free capacity, lower spec.runner.resources, or run fewer "+
						"benchmarks at once", name, waited, c.Message)}
			}
			if waiting.Waiting == "" {
				waiting.Waiting = fmt.Sprintf("%s waits for a node (%s so far, up to %s): %s", name, waited, unschedulableWait, c.Message)
			}
		}
	}
	return waiting
}

// podRequests is what the scheduler reserves for a pod: its containers and its native sidecars
// (init containers that keep running), or its largest plain init container if that is more.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	total := corev1.ResourceList{}
	add := func(into corev1.ResourceList, from corev1.ResourceList) {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			q := into[r]
			q.Add(from[r])
			into[r] = q
		}
	}
	for _, c := range spec.Containers {
		add(total, c.Resources.Requests)
	}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(total, c.Resources.Requests)
		}
	}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q := c.Resources.Requests[r]; q.Cmp(total[r]) > 0 {
					total[r] = q
				}
			}
		}
	}
	return total
}

// fitsSomeNode reports whether requests fit one node's allocatable resources, were it empty.
func fitsSomeNode(requests corev1.ResourceList, nodes []corev1.ResourceList) bool {
	for _, n := range nodes {
		if requests.Cpu().Cmp(*n.Cpu()) <= 0 && requests.Memory().Cmp(*n.Memory()) <= 0 {
			return true
		}
	}
	return false
}

func describeNodes(nodes []corev1.ResourceList) string {
	var parts []string
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("%s CPU and %s", n.Cpu(), n.Memory()))
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("%d more", len(parts)-3))
	}
	return "nodes allocate " + strings.Join(parts, "; ")
}
