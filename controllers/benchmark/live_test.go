package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// TestLiveProgress plays the runner writing its live progress: status.live follows it while the
// run runs, at the progress interval, and is gone once the run ended.
func TestLiveProgress(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t, func(r *TunnelBenchmarkReconciler) { r.PollInterval = time.Minute })
	tb := newBenchmark(ns, "live")
	tb.Spec.Load.ProgressInterval = &metav1.Duration{Duration: time.Second}
	if err := testClient.Create(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	job := waitForJob(t, ns, jobName("live", "direct"))
	publish := func(l runspec.Live) {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := testClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: job.Name}, cm); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(l)
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[runspec.LiveKey] = string(b)
		if err := testClient.Update(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []runspec.Live{
		{Phase: runspec.LiveWarmup, ElapsedSeconds: 1, DurationSeconds: 3, TPS: 900.04, LatencyMs: 4.4, Time: time.Now()},
		{Phase: runspec.LiveLoad, ElapsedSeconds: 5, DurationSeconds: 10, TPS: 1234.56, LatencyMs: 3.2, Time: time.Now()},
	} {
		publish(l)
		// The poll interval is a minute: only the progress interval's requeue can bring it in time.
		eventually(t, 5*time.Second, "status.live "+l.Phase, func() error {
			got := getBenchmark(t, ns, "live").Status.Live
			if got == nil || got.Phase != l.Phase || got.Transport != "direct" || got.Round != 1 || got.Repetitions != 1 ||
				got.ElapsedSeconds != l.ElapsedSeconds || got.TPS != roundTo(l.TPS, 10) {
				return fmt.Errorf("live %+v", got)
			}
			return nil
		})
	}
	finishJob(t, job, 0, resultReport(1200, nil))
	done := waitForPhase(t, ns, "live", benchv1.PhaseCompleted)
	if done.Status.Live != nil {
		t.Errorf("a completed benchmark keeps live %+v", done.Status.Live)
	}
}

// TestLiveOf: the pods' progress adds up (tps summed, latency weighted by tps); progress a status
// cannot carry — figures whose sum or rounding is not finite, negative ones — is not shown, so
// that a live report written by anyone who may edit the run's ConfigMap never ends a benchmark.
func TestLiveOf(t *testing.T) {
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	entry := func(tps, latency float64) string {
		b, _ := json.Marshal(runspec.Live{Phase: "measuring", ElapsedSeconds: 5, DurationSeconds: 10, TPS: tps, LatencyMs: latency, Time: at})
		return string(b)
	}
	tests := []struct {
		name    string
		entries []string
		want    *runspec.Live
	}{
		{"two pods add up", []string{entry(100, 10), entry(300, 20)},
			&runspec.Live{Phase: "measuring", ElapsedSeconds: 5, DurationSeconds: 10, TPS: 400, LatencyMs: 17.5, Time: at}},
		{"a sum past float64's range is not shown", []string{entry(1.7e308, 1), entry(1.7e308, 1)}, nil},
		{"a negative rate is not shown", []string{entry(-5, 1)}, nil},
		{"an entry that is not JSON is skipped", []string{entry(100, 10), "{"},
			&runspec.Live{Phase: "measuring", ElapsedSeconds: 5, DurationSeconds: 10, TPS: 100, LatencyMs: 10, Time: at}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := map[string]string{}
			for i, e := range tt.entries {
				data[runspec.LiveKeyOf(len(tt.entries), i)] = e
			}
			got, ok := liveOf(data, len(tt.entries))
			if tt.want == nil {
				if ok {
					t.Fatalf("shown: %+v", got)
				}
				return
			}
			if !ok || got != *tt.want {
				t.Fatalf("got %+v (%v), want %+v", got, ok, *tt.want)
			}
		})
	}
}
