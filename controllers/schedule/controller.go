// Package schedule holds the ScheduledTunnelBenchmark reconciler: it creates each due run as a
// TunnelBenchmark (when its author still may), keeps and prunes the runs, and judges each completed
// run against the schedule's history (judge.go), setting Regressed. What it decides is pure
// (plan.go, tested without an API server); the benchmarks themselves are run by package benchmark.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/regress"
	"github.com/tunnelbench/tunnelbench/internal/history"
	"github.com/tunnelbench/tunnelbench/internal/operator/admission"
	"github.com/tunnelbench/tunnelbench/internal/operator/metrics"
	"github.com/tunnelbench/tunnelbench/internal/operator/runseal"
	"github.com/tunnelbench/tunnelbench/internal/operator/statusguard"
)

// ScheduledTunnelBenchmarkReconciler runs ScheduledTunnelBenchmarks: it creates their
// benchmarks when due, judges each completed one against the schedule's history, and deletes
// those beyond the limits.
type ScheduledTunnelBenchmarkReconciler struct {
	client.Client
	Recorder events.EventRecorder
	Metrics  *metrics.ScheduleRecorder
	// History is the history store; nil without one (the kept benchmarks are the history).
	History *history.Store
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Seal seals the runs it creates, and tells them from benchmarks that only claim to be its
	// runs (labels and owner references anyone who may create benchmarks can write).
	Seal runseal.Key
	// Access asks the API server whether a schedule's recorded author may do what its next run
	// does, before it is created: the admission webhook's own checks. Nil without the webhook:
	// nothing is checked then, no author being recorded.
	Access *admission.Validator
}

// +kubebuilder:rbac:groups=bench.tunnelbench.io,resources=scheduledtunnelbenchmarks,verbs=get;list;watch
// +kubebuilder:rbac:groups=bench.tunnelbench.io,resources=scheduledtunnelbenchmarks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=bench.tunnelbench.io,resources=tunnelbenchmarks,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=bench.tunnelbench.io,resources=tunnelbenchmarks/status,verbs=get;update;patch
// (Access creates SubjectAccessReviews under the webhook's ClusterRole, which exists with the webhook only.)

// Reconcile observes a schedule and its benchmarks, judges the newly completed ones, decides
// (planSchedule) and acts.
func (r *ScheduledTunnelBenchmarkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	stb := &benchv1.ScheduledTunnelBenchmark{}
	if err := r.Get(ctx, req.NamespacedName, stb); err != nil {
		if apierrors.IsNotFound(err) {
			r.Metrics.Forget(req.Namespace, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !stb.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	tbs, err := r.owned(ctx, stb)
	if err != nil {
		return ctrl.Result{}, err
	}
	// A store that is down delays the judgement, never the schedule: the runs go on, and the
	// benchmarks not judged yet are kept until they are.
	judgeErr := r.judgeCompleted(ctx, stb, tbs)
	view := scheduleView{stb: stb, benchmarks: tbs, now: r.now(), store: r.History != nil, seal: r.Seal}
	p := planSchedule(view)
	if p.create != nil && r.Access != nil {
		// Asked only when a run is due: the answer is the author's rights at that moment.
		if view.author, err = r.observeAuthor(ctx, stb); err != nil {
			return ctrl.Result{}, err
		}
		p = planSchedule(view)
	}
	summarizeLatest(&p.status, stb.Generation, tbs)
	if judgeErr != nil {
		msg := r.mask(judgeErr.Error()) + "; retrying"
		setScheduleCondition(&p.status, stb.Generation, conditions.Judged, metav1.ConditionFalse, conditions.ReasonHistoryUnavailable, msg)
		p.requeue = min(p.requeue, judgeRetry)
		logf.FromContext(ctx).Info("Cannot judge the schedule's benchmarks", "error", msg)
	} else {
		setScheduleCondition(&p.status, stb.Generation, conditions.Judged, metav1.ConditionTrue, conditions.ReasonUpToDate,
			"every completed benchmark is judged against the schedule's history")
	}
	if err := r.act(ctx, stb, p); err != nil {
		return ctrl.Result{}, err
	}
	if !equality.Semantic.DeepEqual(stb.Status, p.status) {
		original := stb.DeepCopy()
		stb.Status = p.status
		if err := r.Status().Patch(ctx, stb, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})); err != nil {
			if !apierrors.IsInvalid(err) {
				return ctrl.Result{}, err
			}
			// Not retried at once as it is: the next due time or judgement computes it afresh.
			logf.FromContext(ctx).Error(err, "The schedule's status is refused by its schema; it is not written")
			r.Recorder.Eventf(stb, nil, corev1.EventTypeWarning, conditions.ReasonInvalidStatus, "Status", "%v", err)
		}
	}
	r.Metrics.Observe(stb)
	return ctrl.Result{RequeueAfter: p.requeue}, nil
}

// observeAuthor asks the API server, as the webhook would, whether the schedule's recorded author
// may do everything its next run does.
func (r *ScheduledTunnelBenchmarkReconciler) observeAuthor(ctx context.Context, stb *benchv1.ScheduledTunnelBenchmark) (authorView, error) {
	user, err := admission.RecordedAuthor(stb)
	if err != nil {
		return authorView{checked: true, refusals: []string{err.Error()}}, nil
	}
	refusals, err := r.Access.ScheduleRefusals(ctx, user, stb)
	if err != nil {
		return authorView{}, fmt.Errorf("cannot ask whether the schedule's author may run it: %w", err)
	}
	a := authorView{checked: true, name: user.Username}
	for _, e := range refusals {
		a.refusals = append(a.refusals, e.Error())
	}
	return a, nil
}

// judgeRetry is how soon a judgement the store's absence stopped is tried again.
const judgeRetry = 30 * time.Second

// mask hides the store's password in text.
func (r *ScheduledTunnelBenchmarkReconciler) mask(text string) string {
	if r.History == nil {
		return text
	}
	return r.History.Mask(text)
}

func (r *ScheduledTunnelBenchmarkReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// owned lists the benchmarks the schedule created: its label, its owner reference and the seal
// that proves the operator made them for it.
func (r *ScheduledTunnelBenchmarkReconciler) owned(ctx context.Context,
	stb *benchv1.ScheduledTunnelBenchmark) ([]benchv1.TunnelBenchmark, error) {
	list := &benchv1.TunnelBenchmarkList{}
	if err := r.List(ctx, list, client.InNamespace(stb.Namespace), client.MatchingLabels{benchv1.LabelSchedule: stb.Name}); err != nil {
		return nil, fmt.Errorf("cannot list the schedule's benchmarks: %w", err)
	}
	var out []benchv1.TunnelBenchmark
	for _, tb := range list.Items {
		if _, uid, sealed := r.Seal.ScheduleOf(&tb); sealed && uid == stb.UID {
			out = append(out, tb)
		}
	}
	return out, nil
}

// act creates, cancels and deletes what the plan says, and records its events. A benchmark that
// exists already (another pass, another operator) is the one wanted: its name is the run's.
func (r *ScheduledTunnelBenchmarkReconciler) act(ctx context.Context, stb *benchv1.ScheduledTunnelBenchmark, p schedulePlan) error {
	for _, name := range p.cancel {
		tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: stb.Namespace, Name: name}}
		if err := r.Patch(ctx, tb, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`))); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("cannot cancel %s (concurrencyPolicy Replace): %w", name, err)
		}
	}
	if p.create != nil {
		err := r.Create(ctx, p.create)
		if apierrors.IsAlreadyExists(err) {
			err = r.runNameTaken(ctx, p.create)
		}
		if err != nil {
			setScheduleCondition(&p.status, stb.Generation, conditions.Ready, metav1.ConditionFalse, conditions.ReasonCreateFailed,
				fmt.Sprintf("cannot create %s: %v", p.create.Name, err))
			r.Recorder.Eventf(stb, nil, corev1.EventTypeWarning, conditions.ReasonCreateFailed, "Create", "cannot create %s: %v", p.create.Name, err)
		}
	}
	for _, name := range p.delete {
		tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: stb.Namespace, Name: name}}
		if err := r.Delete(ctx, tb, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("cannot delete %s (beyond the history limits): %w", name, err)
		}
	}
	for _, e := range p.events {
		typ := corev1.EventTypeNormal
		if e.warning {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(stb, nil, typ, e.reason, "Schedule", "%s", e.note)
	}
	return nil
}

// runNameTaken says whether the benchmark that holds the run's name is the run (another pass or
// another operator made it: nil) or someone else's benchmark under that name (an error: the run
// is missed, and that benchmark is not adopted).
func (r *ScheduledTunnelBenchmarkReconciler) runNameTaken(ctx context.Context, run *benchv1.TunnelBenchmark) error {
	held := &benchv1.TunnelBenchmark{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(run), held); err != nil {
		return fmt.Errorf("it exists, and cannot be read: %w", err)
	}
	ref := metav1.GetControllerOf(run)
	if _, uid, sealed := r.Seal.ScheduleOf(held); sealed && uid == ref.UID {
		return nil
	}
	return errors.New("a benchmark of that name exists that this schedule did not make; it is not taken for the run")
}

// judgeCompleted judges, oldest first, each completed benchmark not yet judged (and, with a
// store, recorded), against the schedule's history, and writes the judgement to its status.
func (r *ScheduledTunnelBenchmarkReconciler) judgeCompleted(ctx context.Context, stb *benchv1.ScheduledTunnelBenchmark,
	tbs []benchv1.TunnelBenchmark) error {
	slices.SortStableFunc(tbs, func(a, b benchv1.TunnelBenchmark) int { return completedAt(&a).Compare(completedAt(&b)) })
	rule := regress.Rule{Window: stb.RegressionWindow(), MinEffect: stb.MinEffect()}
	if r := stb.Spec.Regression; r != nil && r.Since != nil {
		rule.Since = r.Since.Time
	}
	for i := range tbs {
		tb := &tbs[i]
		if tb.Status.Phase != benchv1.PhaseCompleted || Judged(tb) || tb.Labels[benchv1.LabelTemplateHash] != stb.TemplateHash() ||
			r.History != nil && (tb.Status.History == nil || !tb.Status.History.Recorded) {
			continue
		}
		ref, err := r.reference(ctx, stb, tbs, tb, rule.Window)
		if err != nil {
			return err
		}
		js := judge(tb, ref, rule)
		cond := regressedCondition(js, tb.Generation)
		if err := r.markRegressed(ctx, tb, js); err != nil {
			return err
		}
		if err := r.writeJudgement(ctx, tb, js, cond); err != nil {
			return err
		}
		if cond.Status == metav1.ConditionTrue {
			r.Recorder.Eventf(tb, nil, corev1.EventTypeWarning, conditions.ReasonRegressed, "Judge", "%s", cond.Message)
			r.Recorder.Eventf(stb, nil, corev1.EventTypeWarning, conditions.ReasonRegressed, "Judge", "%s: %s", tb.Name, cond.Message)
		}
	}
	return nil
}

// reference is tb's history: from the store when the operator has one, else the kept benchmarks.
func (r *ScheduledTunnelBenchmarkReconciler) reference(ctx context.Context, stb *benchv1.ScheduledTunnelBenchmark,
	tbs []benchv1.TunnelBenchmark, tb *benchv1.TunnelBenchmark, window int) (reference, error) {
	if r.History == nil {
		return referenceFromBenchmarks(tbs, tb), nil
	}
	// Results found regressed leave the reference: read enough for a full window without them.
	points, err := r.History.Series(ctx, history.SeriesKey{Namespace: stb.Namespace, Schedule: stb.Name,
		TemplateHash: stb.TemplateHash()}, 3*window+1)
	if err != nil {
		return nil, fmt.Errorf("cannot read the schedule's history: %w", err)
	}
	return referenceFromStore(points, tb), nil
}

func (r *ScheduledTunnelBenchmarkReconciler) markRegressed(ctx context.Context, tb *benchv1.TunnelBenchmark,
	js []benchv1.TransportJudgement) error {
	if r.History == nil {
		return nil
	}
	for _, j := range js {
		if j.Regressed {
			if err := r.History.MarkRegressed(ctx, string(tb.UID), j.Transport, regress.Figure(j.Figure)); err != nil {
				return fmt.Errorf("cannot mark %s's %s %s regressed in the history: %w", tb.Name, j.Transport, j.Figure, err)
			}
		}
	}
	return nil
}

// writeJudgement writes the judgement to tb's status, reading it again on a conflict (its own
// controller may be writing too).
func (r *ScheduledTunnelBenchmarkReconciler) writeJudgement(ctx context.Context, tb *benchv1.TunnelBenchmark,
	js []benchv1.TransportJudgement, cond metav1.Condition) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &benchv1.TunnelBenchmark{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(tb), cur); err != nil {
			return err
		}
		cur.Status.Regression = js
		meta.SetStatusCondition(&cur.Status.Conditions, cond)
		if err := r.Status().Update(ctx, cur); err != nil {
			return err
		}
		*tb = *cur
		return nil
	})
}

// summarizeLatest copies the newest judged benchmark's judgement and Regressed condition to the
// schedule's status.
func summarizeLatest(st *benchv1.ScheduledTunnelBenchmarkStatus, gen int64, tbs []benchv1.TunnelBenchmark) {
	var newest *benchv1.TunnelBenchmark
	for i := range tbs {
		if Judged(&tbs[i]) && (newest == nil || completedAt(&tbs[i]).After(completedAt(newest))) {
			newest = &tbs[i]
		}
	}
	if newest == nil {
		return
	}
	st.Latest = newest.Status.Regression
	c := *meta.FindStatusCondition(newest.Status.Conditions, conditions.Regressed)
	c.ObservedGeneration, c.LastTransitionTime = gen, metav1.Time{}
	c.Message = newest.Name + ": " + c.Message
	meta.SetStatusCondition(&st.Conditions, c)
}

// SetupWithManager watches schedules and the benchmarks they own, when one ends or is recorded.
func (r *ScheduledTunnelBenchmarkReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	r.Client, r.Recorder = statusguard.Client(r.Client), statusguard.Recorder(r.Recorder)
	ended := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*benchv1.TunnelBenchmark), e.ObjectNew.(*benchv1.TunnelBenchmark)
		return o.Status.Phase != n.Status.Phase || !equality.Semantic.DeepEqual(o.Status.History, n.Status.History)
	}}
	return ctrl.NewControllerManagedBy(mgr).
		WithOptions(opts).
		// An annotation's change looks again too: `kubectl annotate` is how a person asks.
		For(&benchv1.ScheduledTunnelBenchmark{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&benchv1.TunnelBenchmark{}, builder.WithPredicates(ended)).
		Named("scheduledtunnelbenchmark").
		Complete(r)
}
