package controllers

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// DefaultUnschedulableWait bounds how long a pod of a benchmark may wait for a node to fit on
// before the benchmark fails Unschedulable: capacity may free up (another benchmark ending), but
// waiting for spec.timeout would only end with the wrong advice.
const DefaultUnschedulableWait = 2 * time.Minute

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
// wait is Waiting, quoting the scheduler.
func judgePods(pods []corev1.Pod, what string, now time.Time, unschedulableWait time.Duration) transport.Status {
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
			if waited >= unschedulableWait {
				return transport.Status{Reason: benchv1.ReasonUnschedulable, Problem: fmt.Sprintf(
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
