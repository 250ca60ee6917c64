//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

// runnerPodsAddUp: the sleeping script in three runner pods of two clients each makes three times
// what one pod of two clients makes: each pod's figures are what its 2 clients of a 10 ms sleep
// allow (checkSleepPhysics), the run's tps is the pods' sum; the pods start
// their loads together; every figure is cut to the window all three covered (nearly the whole
// 4 s); the run's transactions are the pods' sum and its merged histogram counts every one of them.
func runnerPodsAddUp(t *testing.T, ns string, pg *fixture.Postgres) {
	tb := benchmark(ns, "three-pods", pg, fixture.CredentialsSecret)
	tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}
	tb.Spec.Load.Builtin, tb.Spec.Load.Script, tb.Spec.Load.Protocol = "", "\\sleep 10 ms\n", benchv1.Protocol("simple")
	tb.Spec.Load.Clients, tb.Spec.Load.Threads, tb.Spec.Load.Repetitions = 6, 3, 2
	tb.Spec.Load.Duration = &metav1.Duration{Duration: 4 * time.Second}
	tb.Spec.Runner.Pods = 3
	end := complete(t, tb, 6*time.Minute)
	r := end.Status.Result("direct")
	var transactions int64
	for _, run := range r.Runs {
		t.Logf("run %d: %.1f tps, %d transactions in a %v s window, pods %+v", run.Round, run.TPS, run.Transactions,
			ptrValue(run.WindowSeconds), run.Pods)
		if len(run.Pods) != 3 {
			t.Errorf("run %d: %.1f tps over %d pods, want 3", run.Round, run.TPS, len(run.Pods))
			continue
		}
		var sum int64
		var tps float64
		for _, p := range run.Pods {
			sum += p.Transactions
			tps += p.TPS
			checkSleepPhysics(t, fmt.Sprintf("run %d pod %d", run.Round, p.Index), p.TPS, p.LatencyAvgMs, 2)
			if p.StartOffsetMs > 200 || p.Node == "" {
				t.Errorf("run %d pod %d: started %.0f ms after the first, on %q; want together, on a named node",
					run.Round, p.Index, p.StartOffsetMs, p.Node)
			}
		}
		if math.Abs(run.TPS-tps) > 0.02*tps {
			t.Errorf("run %d: %.1f tps over 3 pods, the pods' sum is %.1f", run.Round, run.TPS, tps)
		}
		if w := run.WindowSeconds; w == nil || *w < 3.5 || *w > 4.1 {
			t.Errorf("run %d: common window %v s, want most of the 4 s the pods ran together", run.Round, w)
		}
		if sum != run.Transactions {
			t.Errorf("run %d: %d transactions, the pods' sum is %d", run.Round, run.Transactions, sum)
		}
		transactions += run.Transactions
	}
	if l := r.Latency; l == nil || l.Samples != transactions {
		t.Errorf("merged histogram %+v, want %d samples: every pod's every transaction", r.Latency, transactions)
	}
}

// ptrValue is what p points to, or zero.
func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
