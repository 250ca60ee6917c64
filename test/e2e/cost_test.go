//go:build e2e

package e2e

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

// clientLimiter: in the real cluster the runner reads its container's cgroup; a runner held to a
// 50m CPU limit under eight clients is its run's limiter (ClientBound, with its throttling), a runner without a limit
// on this 2-core node is not, and both report the client's CPU per transaction.
func clientLimiter(t *testing.T, ns string, pg *fixture.Postgres) {
	// A client starves by construction only when it asks for more CPU than its limit whatever the
	// round trip: two clients wait for the server most of the time, and on a machine whose round
	// trips were 0.5 ms (4,000 tps, 26 µs of client CPU each) they needed just the 100m they were
	// held to, so a slower moment could leave them wanting less, and the honest verdict was "none
	// found". Eight clients held to 50m ask for it at round trips up to 3 ms (8 / 3 ms × 20 µs).
	tests := []struct {
		name    string
		limit   string
		clients int32
		limited bool
	}{
		{"client-starved", "50m", 8, true},
		{"client-roomy", "", 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := benchmark(ns, tt.name, pg, fixture.CredentialsSecret)
			tb.Spec.Transports = tb.Spec.Transports[:1]
			tb.Spec.Load.Clients = tt.clients
			res := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
			if tt.limit != "" {
				// A request above its limit is refused at apply (spec.runner.resources).
				res.Requests[corev1.ResourceCPU] = resource.MustParse(tt.limit)
				res.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(tt.limit)}
			}
			tb.Spec.Runner.Resources = &res
			end := complete(t, tb, 4*time.Minute)
			run := end.Status.Result("direct").Runs[0]
			if len(run.Cost) == 0 || run.Cost[0].Part != benchv1.PartClient || run.Cost[0].CPUMicrosPerTransaction == nil ||
				run.Cost[0].Utilization == nil {
				t.Fatalf("cost %+v", run.Cost)
			}
			c := run.Cost[0]
			t.Logf("%s: %.0f tps, client %.1f µs/transaction, %.0f%% of %.2f cores, limiter %+v", tt.name, run.TPS,
				*c.CPUMicrosPerTransaction, 100**c.Utilization, *c.Cores, run.Limiter)
			// The server is the fixture's pod behind its Service: read through its node's reader,
			// with the node's cores.
			assertSidecarCost(t, *end.Status.Result("direct"), benchv1.PartServer)
			if server := partOf(run, benchv1.PartServer); server == nil || server.Utilization == nil {
				t.Errorf("the server's cost has no utilization: %+v", server)
			}
			// select-only over the extended protocol: a Bind/Execute and its row, a few hundred bytes.
			if w := run.Wire; w == nil || w.BytesPerTransaction == nil || *w.BytesPerTransaction < 50 || *w.BytesPerTransaction > 2000 {
				t.Errorf("bytes on the wire per transaction: %+v", w)
			} else {
				t.Logf("%s: %.0f bytes on the wire per transaction", tt.name, *w.BytesPerTransaction)
			}
			bound := meta.FindStatusCondition(end.Status.Conditions, "ClientBound")
			if tt.limited {
				if run.Limiter == nil || run.Limiter.Part != benchv1.PartClient || bound == nil || c.ThrottledFraction == nil {
					t.Errorf("a runner held to %s: limiter %+v, ClientBound %+v, throttled %v, utilization %v", tt.limit, run.Limiter, bound,
						ptr.Deref(c.ThrottledFraction, -1), *c.Utilization)
				}
				return
			}
			if run.Limiter != nil && run.Limiter.Part == benchv1.PartClient || bound != nil {
				t.Errorf("a roomy runner: limiter %+v, ClientBound %+v", run.Limiter, bound)
			}
		})
	}
}

// assertSidecarCost: every run of the transport reports the sidecar's CPU per transaction, from
// its own container's cgroup, next to the client's.
func assertSidecarCost(t *testing.T, r benchv1.TransportResult, part string) {
	t.Helper()
	for _, run := range r.Runs {
		found := partOf(run, part)
		if found == nil || found.CPUMicrosPerTransaction == nil || *found.CPUMicrosPerTransaction <= 0 {
			t.Errorf("%s run %d: no CPU per transaction of %s in %+v (unmeasured: %+v)", r.Transport, run.Round, part, run.Cost,
				run.Unmeasured)
			continue
		}
		t.Logf("%s run %d: %s %.1f µs/transaction", r.Transport, run.Round, part, *found.CPUMicrosPerTransaction)
	}
}

// partOf is a run's cost of part, nil when not measured.
func partOf(run benchv1.RunResult, part string) *benchv1.PartCost {
	for i := range run.Cost {
		if run.Cost[i].Part == part {
			return &run.Cost[i]
		}
	}
	return nil
}
