package benchmark

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// TestDecideStep judges observed steps without an API server: what a pass does about a run's Job
// in each state it can find it in, a restarted operator's included (it finds the Job it made).
func TestDecideStep(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns", UID: "uid-b",
		CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 4}}
	s := step{ref: benchv1.RunRef{Transport: "direct", Point: 1, Round: 2}, description: "transport direct at clients=4 round 2/3"}
	waits := podWaits{unschedulable: 2 * time.Minute, resources: DefaultResourceWait}
	clock := stepClock{now: now, deadline: now.Add(time.Minute), waits: waits}
	expired := stepClock{now: now, deadline: now.Add(-time.Second), waits: waits}
	owned := func(conds ...batchv1.JobConditionType) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: tb.RunJobName(s.ref), CreationTimestamp: metav1.NewTime(now),
			OwnerReferences: []metav1.OwnerReference{{UID: tb.UID, Controller: ptr.To(true), Kind: "TunnelBenchmark", Name: "b"}}}}
		for _, c := range conds {
			j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue,
				Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline"})
		}
		return j
	}
	foreign := owned()
	foreign.OwnerReferences = []metav1.OwnerReference{{UID: types.UID("other"), Controller: ptr.To(true), Kind: "Deployment",
		Name: "x"}}
	leftover := owned()
	leftover.OwnerReferences = []metav1.OwnerReference{{UID: "an-earlier-uid", Controller: ptr.To(true), Kind: "TunnelBenchmark",
		Name: "b", APIVersion: benchv1.GroupVersion.String()}}
	result := &report.Report{Result: &engine.Result{TPS: 100}, ServerVersion: "15.20"}
	failure := &report.Report{Failure: &report.Failure{Reason: conditions.ReasonConnectionLost, Message: "server closed the connection"}}
	unschedulable := func(since time.Duration, message string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: message,
			LastTransitionTime: metav1.NewTime(now.Add(-since))}}}}
	}
	node := []corev1.ResourceList{{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}}
	big := unschedulable(time.Second, "Insufficient cpu")
	big.Spec.Containers = []corev1.Container{{Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}}
	refusal := corev1.Event{Message: `pods "x" is forbidden: exceeded quota`, FirstTimestamp: metav1.NewTime(now.Add(-3 * time.Minute))}
	tests := []struct {
		name   string
		o      observedStep
		clock  stepClock
		action stepAction
		reason string
		says   string
	}{
		{"no Job yet: create it", observedStep{}, clock, actCreate, "", ""},
		{"no Job past the deadline: time out", observedStep{}, expired, actFail, conditions.ReasonTimeout, "spec.timeout"},
		{"running", observedStep{job: owned()}, clock, actWait, "JobRunning", "runs in Job b-direct-c4-r2"},
		{"a restarted operator finds its running Job", observedStep{job: owned(), pods: []corev1.Pod{{}}}, clock, actWait,
			"JobRunning", "transport direct at clients=4 round 2/3"},
		{"running past the deadline", observedStep{job: owned()}, expired, actFail, conditions.ReasonTimeout, "spec.timeout"},
		{"succeeded with a report", observedStep{job: owned(batchv1.JobComplete), report: result}, expired, actSucceed, "", ""},
		{"succeeded without a report", observedStep{job: owned(batchv1.JobComplete)}, clock, actFail, conditions.ReasonJobFailed,
			"left no result"},
		{"failed with the runner's reason", observedStep{job: owned(batchv1.JobFailed), report: failure}, clock, actFail,
			conditions.ReasonConnectionLost, "server closed the connection"},
		{"failed at its deadline", observedStep{job: owned(batchv1.JobFailed)}, clock, actFail, conditions.ReasonTimeout,
			"raise spec.timeout"},
		{"another's Job of the same name", observedStep{job: foreign}, clock, actFail, conditions.ReasonJobFailed,
			"does not belong to this benchmark"},
		{"an earlier benchmark's Job, still going", observedStep{job: leftover}, clock, actWait, "Waiting",
			"the earlier benchmark of this name"},
		{"waiting for a node", observedStep{job: owned(), pods: []corev1.Pod{unschedulable(time.Minute, "0/1 nodes are available")}},
			clock, actWait, "Waiting", "waits for a node"},
		{"no node for too long", observedStep{job: owned(), pods: []corev1.Pod{unschedulable(3*time.Minute, "0/1 nodes")}},
			clock, actFail, conditions.ReasonUnschedulable, "could not be scheduled"},
		{"a pod that fits a node waits for the CPU others hold", observedStep{job: owned(),
			pods: []corev1.Pod{unschedulable(time.Second, "Insufficient cpu")}, nodes: node},
			clock, actWait, "Waiting", "waits for CPU or memory"},
		{"more CPU than any node has", observedStep{job: owned(), pods: []corev1.Pod{big}, nodes: node},
			clock, actFail, conditions.ReasonUnschedulable, "more than any node allocates even empty"},
		{"its pod refused by a quota for long", observedStep{job: owned(), refusals: []corev1.Event{refusal}}, clock, actFail,
			conditions.ReasonJobFailed, "exceeded quota"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.name = tb.RunJobName(s.ref)
			d := decideStep(o, tb, s, tt.clock)
			if d.action != tt.action || d.reason != tt.reason || !strings.Contains(d.message, tt.says) {
				t.Errorf("decided %d %q %q; want %d %q with %q", d.action, d.reason, d.message, tt.action, tt.reason, tt.says)
			}
		})
	}
}
