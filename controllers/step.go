package controllers

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/report"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
	"github.com/tunnelbench/tunnelbench/internal/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// step is one Job of a benchmark: initialization or a transport's run.
type step struct {
	// ref is the run: transport, sweep point and round (from 1); round 0 for initialization.
	ref benchv1.RunRef
	// pod is what the transport adds to the runner pod; run is what the runner is told, and
	// run.Init marks initialization.
	pod         specs.Pod
	run         runspec.Run
	description string
	// peers are what the run's path goes through (even once they need no creating): blame
	// looks at their pods when the run fails.
	peers []transport.Peer
}

type stepState int

const (
	stepRunning stepState = iota
	stepSucceeded
	stepFailed
)

type stepOutcome struct {
	state  stepState
	report *report.Report
	// job is the step's Job once it succeeded.
	job     *batchv1.Job
	reason  string
	message string
	requeue ctrl.Result
}

// runStep creates the step's Job if it does not exist, and otherwise reads its outcome. The Job's
// deterministic name makes this idempotent: an operator restarted at any point finds the Job it
// created before instead of creating another.
func (r *TunnelBenchmarkReconciler) runStep(ctx context.Context, tb *benchv1.TunnelBenchmark, s step,
	deadline time.Time) (stepOutcome, error) {
	logger := log.FromContext(ctx).WithValues("transport", s.ref.Transport)
	job := &batchv1.Job{}
	key := types.NamespacedName{Namespace: tb.Namespace, Name: specs.JobName(tb, s.ref)}
	err := r.Get(ctx, key, job)
	expired := !r.now().Before(deadline)
	if apierrors.IsNotFound(err) && expired {
		return stepOutcome{state: stepFailed, reason: benchv1.ReasonTimeout, message: timeoutMessage(tb)}, nil
	}
	if apierrors.IsNotFound(err) {
		if s.ref.Round > 0 {
			// Where the runner will store its report: made before the Job, so the runner
			// never finds it missing.
			result := transport.Peer{Object: specs.ResultConfigMap(tb, s.ref)}
			switch ready, problem, err := r.ensurePeer(ctx, tb, result); {
			case err != nil:
				return stepOutcome{}, err
			case problem != nil:
				return stepOutcome{state: stepFailed, reason: benchv1.ReasonOwnershipConflict, message: problem.message}, nil
			case !ready:
				return stepOutcome{state: stepRunning, requeue: r.poll(tb)}, nil
			}
		}
		desired := specs.Job(specs.JobRequest{
			Benchmark: tb, Ref: s.ref, Pod: s.pod, Run: s.run,
			ActiveDeadline: time.Until(deadline), Defaults: r.Defaults,
		})
		if err := r.Create(ctx, desired); err != nil && !apierrors.IsAlreadyExists(err) {
			return stepOutcome{}, fmt.Errorf("cannot create Job %s: %w", key.Name, err)
		}
		logger.Info("Created Job", "job", key.Name)
		r.event(tb, corev1.EventTypeNormal, "JobCreated", "Run", "Started %s in Job %s", s.description, key.Name)
		r.setCondition(tb, benchv1.ConditionProgressing, metav1.ConditionTrue, "JobRunning",
			fmt.Sprintf("%s runs in Job %s", s.description, key.Name))
		return stepOutcome{state: stepRunning, requeue: r.poll(tb)}, nil
	}
	if err != nil {
		return stepOutcome{}, fmt.Errorf("cannot get Job %s: %w", key.Name, err)
	}
	if ofEarlierBenchmark(job, tb) {
		r.setCondition(tb, benchv1.ConditionProgressing, metav1.ConditionTrue, "Waiting", leftoverMessage("Job", job))
		return stepOutcome{state: stepRunning, requeue: r.poll(tb)}, nil
	}
	if !metav1.IsControlledBy(job, tb) {
		return stepOutcome{state: stepFailed, reason: benchv1.ReasonJobFailed, message: fmt.Sprintf(
			"Job %s exists but does not belong to this benchmark: delete it or rename the benchmark", key.Name)}, nil
	}

	switch {
	case jobCondition(job, batchv1.JobComplete):
		rep := r.jobReport(ctx, job)
		if rep == nil || (rep.Result == nil && rep.Copy == nil && !s.run.Init) {
			return stepOutcome{state: stepFailed, reason: benchv1.ReasonJobFailed, message: fmt.Sprintf(
				"Job %s succeeded but its runner left no result in ConfigMap %s or its termination message", key.Name, key.Name)}, nil
		}
		if rep.ServerVersion != "" {
			tb.Status.ServerVersion = rep.ServerVersion
		}
		return stepOutcome{state: stepSucceeded, report: rep, job: job}, nil
	case jobCondition(job, batchv1.JobFailed):
		return r.failedStep(ctx, tb, job, s), nil
	}
	if expired {
		// Its own activeDeadlineSeconds stops it too.
		return stepOutcome{state: stepFailed, reason: benchv1.ReasonTimeout, message: timeoutMessage(tb)}, nil
	}
	trouble := r.jobPodTrouble(ctx, job)
	if trouble == (transport.Status{}) {
		trouble = r.refusedPod(ctx, job)
	}
	switch {
	case trouble.Problem != "":
		return stepOutcome{state: stepFailed, reason: cmp.Or(trouble.Reason, benchv1.ReasonJobFailed), message: trouble.Problem}, nil
	case trouble.Waiting != "":
		r.setCondition(tb, benchv1.ConditionProgressing, metav1.ConditionTrue, "Waiting",
			fmt.Sprintf("Job %s: %s", key.Name, trouble.Waiting))
	default:
		r.setCondition(tb, benchv1.ConditionProgressing, metav1.ConditionTrue, "JobRunning",
			fmt.Sprintf("%s runs in Job %s", s.description, key.Name))
	}
	return stepOutcome{state: stepRunning, requeue: r.poll(tb)}, nil
}

// refusedPod judges a Job whose pod the API refused to create (a ResourceQuota, a LimitRange, an
// admission webhook or Pod Security): the Job controller then has no pod and only reports
// FailedCreate events on the Job while it retries. The refusal is quoted at once in Progressing;
// a quota may free up, so the benchmark fails only once it has lasted the unschedulable wait.
func (r *TunnelBenchmarkReconciler) refusedPod(ctx context.Context, job *batchv1.Job) transport.Status {
	if len(r.jobPods(ctx, job)) > 0 {
		return transport.Status{}
	}
	events := &corev1.EventList{}
	if err := r.APIReader.List(ctx, events, client.InNamespace(job.Namespace), client.MatchingFields{
		"involvedObject.uid": string(job.UID), "reason": "FailedCreate"}); err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the Job's events", "job", job.Name)
		return transport.Status{}
	}
	var first time.Time
	message := ""
	for _, e := range events.Items {
		at := e.FirstTimestamp.Time
		if at.IsZero() {
			at = e.EventTime.Time
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
		message = e.Message
	}
	if message == "" {
		return transport.Status{}
	}
	wait := orDefault(r.UnschedulableWait, DefaultUnschedulableWait)
	if refusedFor := r.now().Sub(first).Truncate(time.Second); refusedFor >= wait {
		return transport.Status{Problem: fmt.Sprintf("the API refused to create Job %s's pod for %s: %s; fix the namespace's "+
			"ResourceQuota or LimitRange, an admission policy, or spec.runner", job.Name, refusedFor, message)}
	}
	return transport.Status{Waiting: "the API refuses to create the runner pod: " + message}
}

// failedStep explains a failed Job from what its pod left and what changed on its path (blame).
func (r *TunnelBenchmarkReconciler) failedStep(ctx context.Context, tb *benchv1.TunnelBenchmark, job *batchv1.Job, s step) stepOutcome {
	terminated := r.runnerTermination(ctx, job)
	rep := r.storedReport(ctx, job.Namespace, job.Name)
	if rep == nil || rep.Failure == nil {
		rep = decodeReport(ctx, job, terminated)
	}
	reason, message := explainFailedJob(job, rep, terminated)
	reason, message = r.blame(ctx, tb, job, s, reason, message)
	return stepOutcome{state: stepFailed, reason: reason, message: message}
}

// explainFailedJob is the reason and message of a failed Job: the runner's own classified failure
// when it wrote one, and the Job controller's reason otherwise (deadline exceeded, pod killed, out
// of memory), with the runner container's end.
func explainFailedJob(job *batchv1.Job, rep *report.Report, terminated *corev1.ContainerStateTerminated) (string, string) {
	if rep != nil && rep.Failure != nil {
		return rep.Failure.Reason, rep.Failure.Message
	}
	reason, message := benchv1.ReasonJobFailed, "the runner pod failed without a report"
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			message = fmt.Sprintf("Job %s failed (%s): %s", job.Name, c.Reason, c.Message)
			if c.Reason == batchv1.JobReasonDeadlineExceeded {
				reason = benchv1.ReasonTimeout
				message += "; raise spec.timeout or shorten spec.load.duration"
			}
		}
	}
	switch {
	case terminated != nil && terminated.Reason != "":
		message += fmt.Sprintf("; runner container: %s (exit code %d)", terminated.Reason, terminated.ExitCode)
	case terminated == nil && reason == benchv1.ReasonJobFailed:
		message += "; its pod ended before the runner reported: deleted, evicted or killed, or its node was lost"
	}
	return reason, message
}

// jobReport reads the runner's report: the whole one from the run's result ConfigMap, which
// outlives the pod, else the short one of the pod's termination message.
func (r *TunnelBenchmarkReconciler) jobReport(ctx context.Context, job *batchv1.Job) *report.Report {
	if rep := r.storedReport(ctx, job.Namespace, job.Name); rep != nil {
		return rep
	}
	return decodeReport(ctx, job, r.runnerTermination(ctx, job))
}

// storedReport reads a run's report from its result ConfigMap (named after its Job), or nil when
// there is none yet. The uncached reader: the operator does not watch ConfigMaps.
func (r *TunnelBenchmarkReconciler) storedReport(ctx context.Context, namespace, name string) *report.Report {
	cm := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cm); err != nil {
		if !apierrors.IsNotFound(err) {
			log.FromContext(ctx).Error(err, "Cannot read a result ConfigMap", "configmap", name)
		}
		return nil
	}
	data := cm.Data[runspec.ResultKey]
	if data == "" {
		return nil
	}
	rep, err := report.Decode(data)
	if err != nil {
		log.FromContext(ctx).Info("Ignored an unreadable result ConfigMap", "configmap", name, "err", err)
		return nil
	}
	return rep
}

// decodeReport reads the runner's report from its container's termination message, or nil.
func decodeReport(ctx context.Context, job *batchv1.Job, terminated *corev1.ContainerStateTerminated) *report.Report {
	if terminated == nil || strings.TrimSpace(terminated.Message) == "" {
		return nil
	}
	rep, err := report.Decode(terminated.Message)
	if err != nil {
		log.FromContext(ctx).Info("Ignored an unreadable termination message", "job", job.Name, "err", err)
		return nil
	}
	return rep
}

// jobPods lists the pods of a Job, newest first not guaranteed. Pods are listed with the uncached
// reader, by the benchmark's labels, and matched to the Job by owner UID.
func (r *TunnelBenchmarkReconciler) jobPods(ctx context.Context, job *batchv1.Job) []corev1.Pod {
	pods := &corev1.PodList{}
	sel := client.MatchingLabels{
		benchv1.LabelBenchmark: job.Labels[benchv1.LabelBenchmark],
		benchv1.LabelTransport: job.Labels[benchv1.LabelTransport],
	}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(job.Namespace), sel); err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the Job's pods", "job", job.Name)
		return nil
	}
	var owned []corev1.Pod
	for _, p := range pods.Items {
		if ownedBy(p, job.UID) {
			owned = append(owned, p)
		}
	}
	return owned
}

// runnerTermination returns the runner container's terminated state in the Job's pods.
func (r *TunnelBenchmarkReconciler) runnerTermination(ctx context.Context, job *batchv1.Job) *corev1.ContainerStateTerminated {
	var found *corev1.ContainerStateTerminated
	for _, p := range r.jobPods(ctx, job) {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == runspec.RunnerContainerName && cs.State.Terminated != nil {
				t := cs.State.Terminated
				// Prefer a termination that carries a message.
				if found == nil || (found.Message == "" && t.Message != "") {
					found = t
				}
			}
		}
	}
	return found
}

// jobPodTrouble judges the pods of a Job (podTrouble).
func (r *TunnelBenchmarkReconciler) jobPodTrouble(ctx context.Context, job *batchv1.Job) transport.Status {
	return r.podTrouble(ctx, job.Namespace, map[string]string{
		benchv1.LabelBenchmark: job.Labels[benchv1.LabelBenchmark],
		benchv1.LabelTransport: job.Labels[benchv1.LabelTransport],
	}, job.UID, "")
}

// podTrouble judges the pods with the labels (and, when owner is set, that owner): see judgePods.
// Pods are listed with the uncached reader.
func (r *TunnelBenchmarkReconciler) podTrouble(ctx context.Context, namespace string, labels map[string]string,
	owner types.UID, what string) transport.Status {
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		log.FromContext(ctx).Error(err, "Cannot list pods", "labels", labels)
		return transport.Status{}
	}
	var mine []corev1.Pod
	for _, p := range pods.Items {
		if owner == "" || ownedBy(p, owner) {
			mine = append(mine, p)
		}
	}
	return judgePods(mine, what, r.now(), orDefault(r.UnschedulableWait, DefaultUnschedulableWait), func() []corev1.ResourceList {
		return r.nodesAllocatable(ctx)
	})
}

func ownedBy(p corev1.Pod, uid types.UID) bool {
	for _, ref := range p.OwnerReferences {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

func jobCondition(job *batchv1.Job, typ batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// +kubebuilder:rbac:groups="",resources=nodes,verbs=list

// nodesAllocatable is every node's allocatable CPU and memory, read when a pod lacks them; nil when
// the nodes cannot be read (namespace-scoped mode grants no cluster-wide read), and the bounded
// unschedulable wait applies.
func (r *TunnelBenchmarkReconciler) nodesAllocatable(ctx context.Context) []corev1.ResourceList {
	list := &corev1.NodeList{}
	if err := r.APIReader.List(ctx, list); err != nil {
		log.FromContext(ctx).V(1).Info("Cannot read the nodes' capacity; an unschedulable pod waits the bounded time", "err", err)
		return nil
	}
	var out []corev1.ResourceList
	for _, n := range list.Items {
		out = append(out, n.Status.Allocatable)
	}
	return out
}
