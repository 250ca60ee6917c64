package benchmark

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func TestServerKey(t *testing.T) {
	bench := func(ns string, server benchv1.ServerSpec) *benchv1.TunnelBenchmark {
		return &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"},
			Spec: benchv1.TunnelBenchmarkSpec{Server: server}}
	}
	external := func(host string, port int32) benchv1.ServerSpec {
		return benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: host, Port: port, Database: "app"}}
	}
	cnpg := benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "pg"}}
	same := [][2]*benchv1.TunnelBenchmark{
		{bench("db", cnpg), bench("db", external("pg-rw", 5432))},
		{bench("db", external("pg-rw", 0)), bench("other", external("pg-rw.db.svc.cluster.local", 5432))},
		{bench("db", external("pg-rw.db", 5432)), bench("x", external("PG-RW.db.svc.", 5432))},
		{bench("a", external("db.example", 5432)), bench("b", external("db.example", 5432))},
	}
	for _, p := range same {
		if a, b := serverKey(p[0]), serverKey(p[1]); a != b {
			t.Errorf("one server, two keys: %s and %s", a, b)
		}
	}
	different := [][2]*benchv1.TunnelBenchmark{
		{bench("db", cnpg), bench("other", cnpg)},
		{bench("db", external("pg-rw", 5432)), bench("db", external("pg-rw", 5433))},
		{bench("db", external("pg-rw", 5432)), bench("other", external("pg-rw", 5432))},
	}
	for _, p := range different {
		if a, b := serverKey(p[0]), serverKey(p[1]); a == b {
			t.Errorf("two servers, one key: %s", a)
		}
	}
}

func TestQueueOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	bench := func(name string, created time.Duration, phase benchv1.Phase, exclusive bool) benchv1.TunnelBenchmark {
		return benchv1.TunnelBenchmark{
			ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: name, UID: types.UID(name),
				CreationTimestamp: metav1.NewTime(t0.Add(created))},
			Spec: benchv1.TunnelBenchmarkSpec{Server: benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "pg"}},
				Exclusive: ptr.To(exclusive)},
			Status: benchv1.TunnelBenchmarkStatus{Phase: phase},
		}
	}
	all := []benchv1.TunnelBenchmark{
		bench("done", 0, benchv1.PhaseCompleted, true),
		bench("running", time.Second, benchv1.PhaseRunning, true),
		bench("queued", 2*time.Second, benchv1.PhaseQueued, true),
		bench("new", 3*time.Second, "", true),
		bench("unguarded", 4*time.Second, "", false),
		bench("tie-b", 5*time.Second, "", true),
		bench("tie-a", 5*time.Second, "", true),
	}
	tests := []struct{ name, ahead string }{
		{"running", ""}, {"queued", "running"}, {"new", "running"}, {"unguarded", ""}, {"tie-a", "running"},
	}
	for _, tt := range tests {
		var tb *benchv1.TunnelBenchmark
		for i := range all {
			if all[i].Name == tt.name {
				tb = &all[i]
			}
		}
		got := ""
		if a := ahead(tb, all); a != nil {
			got = a.Name
		}
		if got != tt.ahead {
			t.Errorf("%s waits for %q, want %q", tt.name, got, tt.ahead)
		}
	}
	// With the running one ended, the oldest waiting one goes first, the rest queue behind it.
	all[1].Status.Phase = benchv1.PhaseCompleted
	for name, want := range map[string]string{"queued": "", "new": "queued", "tie-b": "queued"} {
		for i := range all {
			if all[i].Name == name {
				got := ""
				if a := ahead(&all[i], all); a != nil {
					got = a.Name
				}
				if got != want {
					t.Errorf("after the first ended, %s waits for %q, want %q", name, got, want)
				}
			}
		}
	}
	// Ties in creation time go by namespace/name: tie-a before tie-b.
	if !before(&all[6], &all[5]) {
		t.Error("tie-a must come before tie-b")
	}
}

// TestAheadInCluster: under the cluster-wide limit, a benchmark counts those started and the older
// ones that wait only for a place (their server free); not those behind their own server, ended or
// cancelled.
func TestAheadInCluster(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	bench := func(name, server string, created time.Duration, phase benchv1.Phase) benchv1.TunnelBenchmark {
		return benchv1.TunnelBenchmark{
			ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: name, UID: types.UID(name),
				CreationTimestamp: metav1.NewTime(t0.Add(created))},
			Spec:   benchv1.TunnelBenchmarkSpec{Server: benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: server}}},
			Status: benchv1.TunnelBenchmarkStatus{Phase: phase},
		}
	}
	cancelled := bench("cancelled", "e", 0, "")
	cancelled.Spec.Cancel = true
	all := []benchv1.TunnelBenchmark{
		bench("done", "a", 0, benchv1.PhaseCompleted),
		cancelled,
		bench("running-a", "a", time.Second, benchv1.PhaseRunning),
		bench("pending-b", "b", 2*time.Second, benchv1.PhasePending),
		bench("behind-a", "a", 3*time.Second, benchv1.PhaseQueued), // waits for its server
		bench("waiting-c", "c", 4*time.Second, benchv1.PhaseQueued),
		bench("new-d", "d", 5*time.Second, ""),
	}
	for name, want := range map[string]int{"waiting-c": 2, "new-d": 3, "running-a": 1, "behind-a": 2} {
		for i := range all {
			if all[i].Name == name {
				if got := aheadInCluster(&all[i], all, 0); got != want {
					t.Errorf("%s: %d ahead, want %d", name, got, want)
				}
			}
		}
	}
}

// TestClusterLimit: with MaxRunning 1, or MaxRunningPerNamespace 1, a benchmark of another server
// waits in Queued (its clock not started, reason ClusterLimit or NamespaceLimit) until the running
// one ends, then runs.
func TestClusterLimit(t *testing.T) {
	tests := []struct {
		name, reason, says string
		limit              func(*TunnelBenchmarkReconciler)
	}{
		{"the cluster's", "ClusterLimit", "runs at most 1 at once", func(r *TunnelBenchmarkReconciler) { r.MaxRunning = 1 }},
		{"the namespace's", "NamespaceLimit", "a namespace runs at most 1 at once",
			func(r *TunnelBenchmarkReconciler) { r.MaxRunning, r.MaxRunningPerNamespace = 4, 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			needsEnvtest(t)
			ns := newNamespace(t)
			createCNPGSecrets(t, ns)
			createReadyCluster(t, ns, "pg2")
			createClusterSecrets(t, ns, "pg2")
			// Watching this namespace only: the other tests' benchmarks, running or left running by
			// operators they stopped, would hold the cluster's one place.
			startOperatorAs(t, operatorUser, []string{ns}, tt.limit)
			ctx := context.Background()
			first := newBenchmark(ns, "first")
			if err := testClient.Create(ctx, first); err != nil {
				t.Fatal(err)
			}
			firstJob := waitForJob(t, ns, jobName("first", "direct"))
			other := newBenchmark(ns, "other-server")
			other.Spec.Server.CNPG.ClusterName = "pg2"
			if err := testClient.Create(ctx, other); err != nil {
				t.Fatal(err)
			}
			queued := waitForPhase(t, ns, other.Name, benchv1.PhaseQueued)
			c := meta.FindStatusCondition(queued.Status.Conditions, conditions.Queued)
			if c == nil || c.Reason != tt.reason || !strings.Contains(c.Message, tt.says) || queued.Status.StartTime != nil {
				t.Fatalf("Queued condition %+v, start time %v", c, queued.Status.StartTime)
			}
			finishJob(t, firstJob, 0, resultReport(1000, nil))
			waitForPhase(t, ns, "first", benchv1.PhaseCompleted)
			finishJob(t, waitForJob(t, ns, jobName(other.Name, "direct")), 0, resultReport(900, nil))
			waitForPhase(t, ns, other.Name, benchv1.PhaseCompleted)
		})
	}
}

// TestNamespaceFairness: with a namespace limit of 2 in a cluster of 3 places, namespace a's
// queue (one running, three waiting) holds back its own third and fourth, and a later benchmark
// of namespace b is not counted behind them: it takes the third place. Without the namespace
// limit, a's queue would fill the cluster first.
func TestNamespaceFairness(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	bench := func(ns, name string, created time.Duration, phase benchv1.Phase) benchv1.TunnelBenchmark {
		return benchv1.TunnelBenchmark{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name),
				CreationTimestamp: metav1.NewTime(t0.Add(created))},
			Spec:   benchv1.TunnelBenchmarkSpec{Server: benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: name}}},
			Status: benchv1.TunnelBenchmarkStatus{Phase: phase},
		}
	}
	all := []benchv1.TunnelBenchmark{
		bench("a", "running", 0, benchv1.PhaseRunning),
		bench("a", "q1", time.Second, benchv1.PhaseQueued),
		bench("a", "q2", 2*time.Second, benchv1.PhaseQueued),
		bench("a", "q3", 3*time.Second, benchv1.PhaseQueued),
		bench("b", "late", 4*time.Second, ""),
	}
	tests := []struct {
		name                      string
		inNamespace, perNS2, noNS int
	}{
		{"q1", 1, 1, 1},   // a's second place: goes
		{"q2", 2, 2, 2},   // a's limit reached: waits for its namespace
		{"q3", 3, 2, 3},   // idem
		{"late", 0, 2, 4}, // b: running and q1 ahead (q2 and q3 wait for their namespace); four without
	}
	for _, tt := range tests {
		tb := &all[slices.IndexFunc(all, func(b benchv1.TunnelBenchmark) bool { return b.Name == tt.name })]
		if got := aheadInNamespace(tb, all); got != tt.inNamespace {
			t.Errorf("%s: %d ahead in its namespace, want %d", tt.name, got, tt.inNamespace)
		}
		if got := aheadInCluster(tb, all, 2); got != tt.perNS2 {
			t.Errorf("%s: %d ahead in the cluster with a namespace limit of 2, want %d", tt.name, got, tt.perNS2)
		}
		if got := aheadInCluster(tb, all, 0); got != tt.noNS {
			t.Errorf("%s: %d ahead in the cluster without a namespace limit, want %d", tt.name, got, tt.noNS)
		}
	}
}

// TestQueuedBehind: an end wakes every other benchmark waiting in the queue, and none that runs,
// ended or is being deleted.
func TestQueuedBehind(t *testing.T) {
	bench := func(name string, phase benchv1.Phase) benchv1.TunnelBenchmark {
		return benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: name, UID: types.UID(name)},
			Status: benchv1.TunnelBenchmarkStatus{Phase: phase}}
	}
	deleting := bench("deleting", benchv1.PhaseQueued)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	ended := bench("ended", benchv1.PhaseCompleted)
	all := []benchv1.TunnelBenchmark{ended, bench("running", benchv1.PhaseRunning), bench("queued-a", benchv1.PhaseQueued),
		bench("failed", benchv1.PhaseFailed), deleting, bench("queued-b", benchv1.PhaseQueued), bench("new", "")}
	var got []string
	for _, o := range queuedBehind(&ended, all) {
		got = append(got, o.Name)
	}
	if want := []string{"queued-a", "queued-b"}; !slices.Equal(got, want) {
		t.Errorf("woken %v, want %v", got, want)
	}
	// An end seen again while queued (a stale read) wakes the others, never itself.
	if got := queuedBehind(&all[2], all); len(got) != 1 || got[0].Name != "queued-b" {
		t.Errorf("a queued benchmark woke %v", got)
	}
}
