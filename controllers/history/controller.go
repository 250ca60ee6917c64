// Package history holds the Reconciler: it appends every completed benchmark's results
// to the history store (internal/history) once, and records in the benchmark's status that it did.
package history

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	historystore "github.com/tunnelbench/tunnelbench/internal/history"
	"github.com/tunnelbench/tunnelbench/internal/operator/runseal"
	"github.com/tunnelbench/tunnelbench/internal/operator/statusguard"
)

// Reconciler appends every completed benchmark's results to the history store, once, and
// says in the benchmark's status whether they are there. A store that is down is retried with a
// growing delay (at most maxHistoryBackoff); the benchmark stays Completed meanwhile.
type Reconciler struct {
	client.Client
	Store *historystore.Store
	// Seal tells a schedule's runs from benchmarks that only claim to be (runseal): only a sealed
	// run is recorded as its schedule's; any other is recorded as a benchmark of no schedule.
	Seal runseal.Key
}

// maxHistoryBackoff bounds the delay between attempts to record a benchmark.
const maxHistoryBackoff = 5 * time.Minute

// Reconcile records one completed benchmark.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tb := &benchv1.TunnelBenchmark{}
	if err := r.Get(ctx, req.NamespacedName, tb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !needsRecording(tb) {
		return ctrl.Result{}, nil
	}
	schedule, hash := "", ""
	if name, _, sealed := r.Seal.ScheduleOf(tb); sealed {
		schedule, hash = name, tb.Labels[benchv1.LabelTemplateHash]
	}
	rec := historystore.RecordOf(tb, schedule, hash)
	_, werr := r.Store.Write(ctx, rec)
	attempts := int32(1)
	if tb.Status.History != nil {
		attempts = tb.Status.History.Attempts + 1
	}
	h := &benchv1.HistoryRecord{Recorded: werr == nil, Time: &metav1.Time{Time: time.Now()}, Attempts: attempts}
	if werr != nil {
		h.Message = bounded.Text(r.Store.Mask(werr.Error())+"; retrying", 512)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &benchv1.TunnelBenchmark{}
		if err := r.Get(ctx, req.NamespacedName, cur); err != nil {
			return err
		}
		cur.Status.History = h
		return r.Status().Update(ctx, cur)
	})
	if apierrors.IsInvalid(err) {
		// The record stands in the store; only its note in the status is refused.
		log.FromContext(ctx).Error(err, "The benchmark's history note is refused by its schema")
		err = nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if werr != nil {
		return ctrl.Result{RequeueAfter: historyBackoff(attempts)}, nil
	}
	return ctrl.Result{}, nil
}

// historyBackoff is the delay after the attempts-th failed attempt: 2, 4, 8 … seconds, at most
// maxHistoryBackoff.
func historyBackoff(attempts int32) time.Duration {
	d := time.Second << min(attempts, 16)
	return min(d, maxHistoryBackoff)
}

// needsRecording says whether a benchmark has results the store lacks.
func needsRecording(tb *benchv1.TunnelBenchmark) bool {
	return tb.Status.Phase == benchv1.PhaseCompleted && (tb.Status.History == nil || !tb.Status.History.Recorded) &&
		tb.DeletionTimestamp.IsZero()
}

// SetupWithManager watches benchmarks that completed and are not recorded.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	r.Client = statusguard.Client(r.Client)
	unrecorded := predicate.NewPredicateFuncs(func(o client.Object) bool {
		tb, ok := o.(*benchv1.TunnelBenchmark)
		return ok && needsRecording(tb)
	})
	return ctrl.NewControllerManagedBy(mgr).
		WithOptions(opts).
		For(&benchv1.TunnelBenchmark{}, builder.WithPredicates(unrecorded, predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return needsRecording(e.ObjectNew.(*benchv1.TunnelBenchmark)) }})).
		Named("history").
		Complete(r)
}
