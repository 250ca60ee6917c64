package benchmark

import (
	"cmp"
	"context"
	"errors"
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

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
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
	// transport is the run's, nil for initialization: it names the parts of its path that broke.
	transport transport.Transport
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
	// pods are each runner pod's figures of a run of several.
	pods []benchv1.PodRun
	// seen is what the pass observed of the step's Job (the Job, its pods, its result
	// ConfigMap's data while it runs a chaos-mesh link), for what acts on it after the step:
	// nothing is read twice in a pass.
	seen    observedStep
	reason  string
	message string
	requeue ctrl.Result
}

// runStep creates the step's Job if it does not exist, and otherwise reads its outcome: what the
// pass sees of the step is read once (observeStep), judged by a pure function (decideStep) and
// acted on (actOnStep). The Job's deterministic name makes this idempotent: an operator restarted
// at any point finds the Job it created before instead of creating another.
func (r *TunnelBenchmarkReconciler) runStep(ctx context.Context, tb *benchv1.TunnelBenchmark, s step,
	deadline time.Time) (stepOutcome, error) {
	o, err := r.observeStep(ctx, tb, s)
	if err != nil {
		return stepOutcome{}, err
	}
	d := decideStep(o, tb, s, stepClock{now: r.now(), deadline: deadline, waits: r.podWaits()})
	return r.actOnStep(ctx, tb, s, o, d, deadline)
}

// observedStep is what one pass reads of a step's Job, each thing once.
type observedStep struct {
	// name is the Job's name; job is nil until it exists.
	name string
	job  *batchv1.Job
	// pods are the Job's pods, for a Job of this benchmark.
	pods []corev1.Pod
	// refusals are the Job's FailedCreate events while it has no pod (a quota, an admission policy).
	refusals []corev1.Event
	// nodes are the nodes' allocatable resources, read when a pod waits for CPU or memory.
	nodes []corev1.ResourceList
	// report is the runner's report once the Job ended: its result ConfigMap's, else the
	// termination message's; terminated is the runner container's end.
	report     *report.Report
	terminated *corev1.ContainerStateTerminated
	// runners is how many pods run the step (spec.runner.pods for a measured run); with several,
	// data is the run's result ConfigMap's and podReports each pod's report there.
	runners    int
	data       map[string]string
	podReports []*report.Report
}

// observeStep reads the step's Job and, when it is this benchmark's, its pods and what its state
// calls for.
func (r *TunnelBenchmarkReconciler) observeStep(ctx context.Context, tb *benchv1.TunnelBenchmark, s step) (observedStep, error) {
	o := observedStep{name: specs.JobName(tb, s.ref)}
	job := &batchv1.Job{}
	switch err := r.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: o.name}, job); {
	case apierrors.IsNotFound(err):
		return o, nil
	case err != nil:
		return o, fmt.Errorf("cannot get Job %s: %w", o.name, err)
	}
	o.job = job
	if ofEarlierBenchmark(job, tb) || !metav1.IsControlledBy(job, tb) {
		return o, nil
	}
	o.pods = r.jobPods(ctx, job)
	o.terminated = runnerTermination(o.pods)
	if o.runners = max(s.run.Pods, 1); o.runners > 1 {
		o.data = r.resultData(ctx, job.Namespace, job.Name)
		o.podReports = podReports(o.data, o.runners)
		return o, nil
	}
	if s.run.AwaitLink && !jobCondition(job, batchv1.JobComplete) && !jobCondition(job, batchv1.JobFailed) {
		// Whether the operator already marked the run's emulated link as in place.
		o.data = r.resultData(ctx, job.Namespace, job.Name)
	}
	if jobCondition(job, batchv1.JobComplete) || jobCondition(job, batchv1.JobFailed) {
		if o.report = r.storedReport(ctx, job.Namespace, job.Name); o.report == nil ||
			(jobCondition(job, batchv1.JobFailed) && o.report.Failure == nil) {
			o.report = decodeReport(ctx, job, o.terminated)
		}
		return o, nil
	}
	if len(o.pods) == 0 {
		o.refusals = r.failedCreates(ctx, job)
	}
	if waitsForResources(o.pods) {
		o.nodes = r.nodesAllocatable(ctx)
	}
	return o, nil
}

// stepClock is the times a step is judged by.
type stepClock struct {
	now, deadline time.Time
	waits         podWaits
}

// stepAction is what a pass does about a step.
type stepAction int

const (
	// actCreate makes the step's result ConfigMap and Job.
	actCreate stepAction = iota
	// actWait looks again later, saying why in Progressing.
	actWait
	// actSucceed records the step's report.
	actSucceed
	// actFail ends the benchmark with the decision's reason and message.
	actFail
	// actRelease starts the measured loads of a run's pods together, once all are ready.
	actRelease
)

// stepDecision is what decideStep concluded.
type stepDecision struct {
	action stepAction
	// reason and message: the failure (actFail), or Progressing's (actWait).
	reason, message string
	// blame asks act to refine a failed Job's failure from what changed on its path.
	blame bool
	// report is the run's report when decide made it (the merge of several pods').
	report *report.Report
}

// decideStep judges an observed step, with no API call: create its Job, wait for it (and why),
// record its report, or fail the benchmark (and why). Past the deadline nothing is created, but
// a Job that finished is still read.
func decideStep(o observedStep, tb *benchv1.TunnelBenchmark, s step, c stepClock) stepDecision {
	expired := !c.now.Before(c.deadline)
	job := o.job
	switch {
	case job == nil && expired:
		return stepDecision{action: actFail, reason: conditions.ReasonTimeout, message: timeoutMessage(tb)}
	case job == nil:
		return stepDecision{action: actCreate}
	case ofEarlierBenchmark(job, tb):
		return stepDecision{action: actWait, reason: conditions.ReasonWaiting, message: leftoverMessage("Job", job)}
	case !metav1.IsControlledBy(job, tb):
		return stepDecision{action: actFail, reason: conditions.ReasonJobFailed, message: fmt.Sprintf(
			"Job %s exists but does not belong to this benchmark: delete it or rename the benchmark", job.Name)}
	}
	if o.runners > 1 && !expired {
		if d, handled := decidePods(o, job, o.runners); handled {
			return d
		}
	}
	switch {
	case jobCondition(job, batchv1.JobComplete):
		if rep := o.report; rep == nil || (rep.Result == nil && rep.Copy == nil && !s.run.Init) {
			return stepDecision{action: actFail, reason: conditions.ReasonJobFailed, message: fmt.Sprintf(
				"Job %s succeeded but its runner left no result in ConfigMap %s or its termination message", job.Name, job.Name)}
		}
		return stepDecision{action: actSucceed}
	case jobCondition(job, batchv1.JobFailed):
		reason, message := explainFailedJob(job, o.report, o.terminated)
		return stepDecision{action: actFail, reason: reason, message: message, blame: true}
	case expired:
		// Its own activeDeadlineSeconds stops it too.
		return stepDecision{action: actFail, reason: conditions.ReasonTimeout, message: timeoutMessage(tb)}
	}
	var nodes func() []corev1.ResourceList
	if o.nodes != nil {
		nodes = func() []corev1.ResourceList { return o.nodes }
	}
	trouble := judgePods(o.pods, "", c.now, c.waits, nodes)
	if trouble == (transport.Status{}) && len(o.pods) == 0 {
		trouble = judgeRefusals(job.Name, o.refusals, c.now, c.waits.unschedulable)
	}
	switch {
	case trouble.Problem != "":
		return stepDecision{action: actFail, reason: cmp.Or(trouble.Reason, conditions.ReasonJobFailed), message: trouble.Problem}
	case trouble.Waiting != "":
		return stepDecision{action: actWait, reason: conditions.ReasonWaiting, message: fmt.Sprintf("Job %s: %s", job.Name, trouble.Waiting)}
	}
	return stepDecision{action: actWait, reason: conditions.ReasonJobRunning,
		message: fmt.Sprintf("%s runs in Job %s", s.description, job.Name)}
}

// actOnStep does what the decision says and reports the step's outcome.
func (r *TunnelBenchmarkReconciler) actOnStep(ctx context.Context, tb *benchv1.TunnelBenchmark, s step, o observedStep,
	d stepDecision, deadline time.Time) (stepOutcome, error) {
	switch d.action {
	case actCreate:
		return r.createStep(ctx, tb, s, o.name, deadline)
	case actSucceed:
		rep := cmp.Or(d.report, o.report)
		if rep.ServerVersion != "" {
			tb.Status.ServerVersion = rep.ServerVersion
		}
		out := stepOutcome{state: stepSucceeded, report: rep, seen: o}
		if o.runners > 1 {
			out.pods = podRuns(o.podReports, o.pods)
		}
		return out, nil
	case actRelease:
		if err := r.release(ctx, tb.Namespace, o.name); err != nil {
			return stepOutcome{}, err
		}
	case actFail:
		reason, message := d.reason, d.message
		if d.blame {
			reason, message = r.blame(ctx, tb, o.job, o.pods, s, reason, message)
		}
		return stepOutcome{state: stepFailed, reason: reason, message: message}, nil
	}
	r.setCondition(tb, conditions.Progressing, metav1.ConditionTrue, d.reason, d.message)
	return stepOutcome{state: stepRunning, requeue: r.poll(tb), seen: o}, nil
}

// createStep makes a step's result ConfigMap (a measured run's), then its Job.
func (r *TunnelBenchmarkReconciler) createStep(ctx context.Context, tb *benchv1.TunnelBenchmark, s step, name string,
	deadline time.Time) (stepOutcome, error) {
	if s.ref.Round > 0 {
		// Where the runner will store its report: made before the Job, so the runner never finds
		// it missing.
		result := transport.Peer{Object: specs.ResultConfigMap(tb, s.ref)}
		ready, err := r.ensurePeer(ctx, tb, result)
		var problem *peerProblem
		switch {
		case errors.As(err, &problem):
			return stepOutcome{state: stepFailed, reason: conditions.ReasonOwnershipConflict, message: problem.message}, nil
		case err != nil:
			return stepOutcome{}, err
		case !ready:
			return stepOutcome{state: stepRunning, requeue: r.poll(tb)}, nil
		}
	}
	desired := specs.Job(specs.JobRequest{
		Benchmark: tb, Ref: s.ref, Pod: s.pod, Run: s.run, ActiveDeadline: time.Until(deadline), Defaults: r.Defaults,
	})
	if err := r.Create(ctx, desired); err != nil && !apierrors.IsAlreadyExists(err) {
		if why, refused := refusedAsInvalid("Job", name, err); refused {
			return stepOutcome{state: stepFailed, reason: conditions.ReasonInvalidSpec, message: why}, nil
		}
		return stepOutcome{}, fmt.Errorf("cannot create Job %s: %w", name, err)
	}
	log.FromContext(ctx).Info("Created Job", "transport", s.ref.Transport, "job", name)
	r.event(tb, corev1.EventTypeNormal, conditions.ReasonJobCreated, "Run", "Started %s in Job %s", s.description, name)
	r.setCondition(tb, conditions.Progressing, metav1.ConditionTrue, conditions.ReasonJobRunning,
		fmt.Sprintf("%s runs in Job %s", s.description, name))
	return stepOutcome{state: stepRunning, requeue: r.poll(tb)}, nil
}

// failedCreates are a Job's FailedCreate events: the API refused its pod (a ResourceQuota, a
// LimitRange, an admission webhook or Pod Security), and the Job controller retries.
func (r *TunnelBenchmarkReconciler) failedCreates(ctx context.Context, job *batchv1.Job) []corev1.Event {
	events := &corev1.EventList{}
	if err := r.APIReader.List(ctx, events, client.InNamespace(job.Namespace), client.MatchingFields{
		"involvedObject.uid": string(job.UID), "reason": "FailedCreate"}); err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the Job's events", "job", job.Name)
		return nil
	}
	return events.Items
}

// judgeRefusals judges a Job whose pod the API refused to create: the refusal is quoted at once
// in Progressing; a quota may free up, so the benchmark fails only once it has lasted the
// unschedulable wait.
func judgeRefusals(jobName string, events []corev1.Event, now time.Time, wait time.Duration) transport.Status {
	var first time.Time
	message := ""
	for _, e := range events {
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
	if refusedFor := now.Sub(first).Truncate(time.Second); refusedFor >= wait {
		return transport.Status{Problem: fmt.Sprintf("the API refused to create Job %s's pod for %s: %s; fix the namespace's "+
			"ResourceQuota or LimitRange, an admission policy, or spec.runner", jobName, refusedFor, message)}
	}
	return transport.Status{Waiting: "the API refuses to create the runner pod: " + message}
}

// waitsForResources reports whether a pod waits for a node with enough CPU or memory: judgePods
// then compares it with the nodes' allocatable resources.
func waitsForResources(pods []corev1.Pod) bool {
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
				strings.Contains(c.Message, "Insufficient") {
				return true
			}
		}
	}
	return false
}

// explainFailedJob is the reason and message of a failed Job: the runner's own classified failure
// when it wrote one, and the Job controller's reason otherwise (deadline exceeded, pod killed, out
// of memory), with the runner container's end.
func explainFailedJob(job *batchv1.Job, rep *report.Report, terminated *corev1.ContainerStateTerminated) (string, string) {
	if rep != nil && rep.Failure != nil {
		return rep.Failure.Reason, rep.Failure.Message
	}
	reason, message := conditions.ReasonJobFailed, "the runner pod failed without a report"
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			message = fmt.Sprintf("Job %s failed (%s): %s", job.Name, c.Reason, c.Message)
			if c.Reason == batchv1.JobReasonDeadlineExceeded {
				reason = conditions.ReasonTimeout
				message += "; raise spec.timeout or shorten spec.load.duration"
			}
		}
	}
	switch {
	case terminated != nil && terminated.Reason != "":
		message += fmt.Sprintf("; runner container: %s (exit code %d)", terminated.Reason, terminated.ExitCode)
	case terminated == nil && reason == conditions.ReasonJobFailed:
		message += "; its pod ended before the runner reported: deleted, evicted or killed, or its node was lost"
	}
	return reason, message
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
	rep, err := reportIn(cm.Data)
	if err != nil {
		log.FromContext(ctx).Info("Ignored an unreadable result ConfigMap", "configmap", name, "err", err)
		return nil
	}
	return rep
}

// reportIn is the run's report in its result ConfigMap's data: its runner's, or its pods' merged
// (report-0.json, report-1.json, …); nil when there is none.
func reportIn(data map[string]string) (*report.Report, error) {
	if raw := data[runspec.ResultKey]; raw != "" {
		return report.Decode(raw)
	}
	var pods []*report.Report
	for i := 0; data[runspec.ReportKey(runspec.MaxPods, i)] != ""; i++ {
		rep, err := report.Decode(data[runspec.ReportKey(runspec.MaxPods, i)])
		if err != nil {
			return nil, err
		}
		pods = append(pods, rep)
	}
	if len(pods) == 0 {
		return nil, nil
	}
	return report.MergePods(pods)
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

// runnerTermination is the runner container's terminated state in a Job's pods, preferring one
// that carries a message.
func runnerTermination(pods []corev1.Pod) *corev1.ContainerStateTerminated {
	var found *corev1.ContainerStateTerminated
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == runspec.RunnerContainerName && cs.State.Terminated != nil {
				t := cs.State.Terminated
				if found == nil || (found.Message == "" && t.Message != "") {
					found = t
				}
			}
		}
	}
	return found
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
	return judgePods(mine, what, r.now(), r.podWaits(), func() []corev1.ResourceList {
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

// refusedAsInvalid is why a create the API server refused as invalid ends the benchmark: the
// operator built the object from a spec its schema admitted, and no retry makes it valid (a
// runner's request above its limit was once retried until the benchmark's timeout). Other errors
// are not: they may pass.
func refusedAsInvalid(kind, name string, err error) (string, bool) {
	if !apierrors.IsInvalid(err) {
		return "", false
	}
	return fmt.Sprintf("the API server refused %s %s, made from this benchmark's spec: %v; correct the spec and apply it again",
		kind, name, err), true
}
