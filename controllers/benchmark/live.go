package benchmark

import (
	"context"
	"encoding/json"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// observeLive copies the running run's live progress, which its runner keeps in the run's result
// ConfigMap (runspec.Live) at each of pgbench's progress reports, into status.live. The operator
// reads that one ConfigMap by name, uncached: no watch on ConfigMaps, no cache of other
// workloads' ones; its role already has get on ConfigMaps.
func (r *TunnelBenchmarkReconciler) observeLive(ctx context.Context, tb *benchv1.TunnelBenchmark, ref benchv1.RunRef,
	jobName string) {
	cm := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tb.Namespace, Name: jobName}, cm); err != nil {
		log.FromContext(ctx).V(1).Info("No live progress to read", "configmap", jobName, "error", err.Error())
		return
	}
	l, ok := liveOf(cm.Data, tb.RunnerPods())
	if !ok {
		return
	}
	tb.Status.Live = &benchv1.LiveRun{
		Transport: ref.Transport, Point: tb.PointName(ref.Point), Round: ref.Round, Repetitions: tb.Repetitions(), Phase: l.Phase,
		ElapsedSeconds: roundTo(l.ElapsedSeconds, 10), DurationSeconds: l.DurationSeconds,
		TPS: roundTo(l.TPS, 10), LatencyMs: roundTo(l.LatencyMs, 1000),
		// Whole seconds, as the API keeps them: a finer time would differ from the stored one on
		// every pass and cost a status write each.
		UpdateTime: metav1.NewTime(l.Time.Truncate(time.Second)),
	}
}

// liveOf is a run's live progress in its result ConfigMap's data: its pod's, or the sum of its
// pods' (tps added, latency weighted by tps, the latest report's time; the pods run in step).
func liveOf(data map[string]string, pods int) (runspec.Live, bool) {
	var out runspec.Live
	found := false
	for i := range pods {
		raw, ok := data[runspec.LiveKeyOf(pods, i)]
		if !ok {
			continue
		}
		var l runspec.Live
		if json.Unmarshal([]byte(raw), &l) != nil {
			continue
		}
		if out.TPS+l.TPS > 0 {
			out.LatencyMs = (out.LatencyMs*out.TPS + l.LatencyMs*l.TPS) / (out.TPS + l.TPS)
		}
		out.TPS += l.TPS
		out.Phase, out.ElapsedSeconds, out.DurationSeconds = l.Phase, max(out.ElapsedSeconds, l.ElapsedSeconds), l.DurationSeconds
		if l.Time.After(out.Time) {
			out.Time = l.Time
		}
		found = true
	}
	// Progress is a glimpse, not a result: one that no status can carry (figures past float64's
	// range, summed or rounded into infinities) is not shown, rather than end the benchmark.
	for _, x := range []float64{out.TPS, out.LatencyMs, out.ElapsedSeconds, out.DurationSeconds} {
		if math.IsNaN(roundTo(x, 1000)) || math.IsInf(roundTo(x, 1000), 0) || x < 0 {
			return runspec.Live{}, false
		}
	}
	return out, found
}

func roundTo(x, per float64) float64 { return math.Round(x*per) / per }

// liveRequeue is when a running run is looked at again: at its progress interval, so that
// status.live follows pgbench's reports, and never later than the poll interval.
func (r *TunnelBenchmarkReconciler) liveRequeue(tb *benchv1.TunnelBenchmark, res ctrl.Result) ctrl.Result {
	every := benchv1.DefaultProgressInterval
	if p := tb.Spec.Load.ProgressInterval; p != nil && p.Duration > 0 {
		every = p.Duration
	}
	if res.RequeueAfter == 0 || every < res.RequeueAfter {
		res.RequeueAfter = every
	}
	return res
}
