package benchmark

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func TestDecideLock(t *testing.T) {
	me := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{UID: "me"}}
	lease := func(holder string) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)}}
	}
	other := func(uid string, phase benchv1.Phase) *benchv1.TunnelBenchmark {
		return &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)},
			Status: benchv1.TunnelBenchmarkStatus{Phase: phase}}
	}
	now := time.Now()
	endedAgo := func(d time.Duration) *benchv1.TunnelBenchmark {
		o := other("o", benchv1.PhaseCompleted)
		o.Status.CompletionTime = &metav1.Time{Time: now.Add(-d)}
		return o
	}
	deleting := other("o", benchv1.PhaseRunning)
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	tests := []struct {
		name   string
		lease  *coordinationv1.Lease
		holder *benchv1.TunnelBenchmark
		want   lockDecision
	}{
		{"no Lease", nil, nil, lockTake},
		{"mine already (a pass whose status write was lost)", lease("me"), me, lockHeld},
		{"held by a running benchmark", lease("o"), other("o", benchv1.PhaseRunning), lockWait},
		{"held by one that is initializing", lease("o"), other("o", benchv1.PhaseInitializing), lockWait},
		{"its holder ended, no time recorded (the operator stopped before releasing)", lease("o"), other("o", benchv1.PhaseFailed),
			lockTakeOver},
		{"its holder ended just now: its pods may still run", lease("o"), endedAgo(time.Second), lockWaitRelease},
		{"its holder ended within the release bound", lease("o"), endedAgo(maxReleaseWait - time.Second), lockWaitRelease},
		{"its holder ended past the release bound (left behind)", lease("o"), endedAgo(maxReleaseWait), lockTakeOver},
		{"its holder is gone", lease("o"), nil, lockTakeOver},
		{"its holder's name now has another benchmark", lease("o"), other("new", benchv1.PhaseRunning), lockTakeOver},
		{"its holder is being deleted", lease("o"), deleting, lockTakeOver},
	}
	for _, tt := range tests {
		if got := decideLock(me, tt.lease, tt.holder, now); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestTwoBenchmarksOfOneServerInOneSecond: the race. "zz" starts, and "aa" of the same
// server is created in the same second (creation times have whole seconds, and ties went by name):
// aa waits, in both orders, and at no time do both have a Job; the second runs once the first
// ended.
func TestTwoBenchmarksOfOneServerInOneSecond(t *testing.T) {
	needsEnvtest(t)
	for _, order := range [][2]string{{"zz-race", "aa-race"}, {"aa-race", "zz-race"}} {
		t.Run(order[0]+" first", func(t *testing.T) {
			ns, firstJob := startInOneSecond(t, order[0], order[1])
			second := waitForPhase(t, ns, order[1], benchv1.PhaseQueued)
			if c := meta.FindStatusCondition(second.Status.Conditions, conditions.Queued); c == nil ||
				c.Reason != "WaitingForServer" || !strings.Contains(c.Message, order[0]) {
				t.Fatalf("Queued condition %+v, want WaitingForServer naming %s", c, order[0])
			}
			assertNoJobYet(t, ns, jobName(order[1], "direct"), order[0]+" to end")
			finishJob(t, firstJob, 0, resultReport(1000, nil))
			waitForPhase(t, ns, order[0], benchv1.PhaseCompleted)
			finishJob(t, waitForJob(t, ns, jobName(order[1], "direct")), 0, resultReport(900, nil))
			waitForPhase(t, ns, order[1], benchv1.PhaseCompleted)
			assertNoServerLeases(t, ns)
		})
	}
}

// TestQueuedStartsWhenTheServerIsFree: a benchmark queued behind another of its server starts
// once the first has ended and released the server, not at its next poll (a minute here, so only
// the wake-up can start it within the wait below).
func TestQueuedStartsWhenTheServerIsFree(t *testing.T) {
	needsEnvtest(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperatorAs(t, operatorUser, []string{ns}, func(r *TunnelBenchmarkReconciler) { r.PollInterval = time.Minute })
	if err := testClient.Create(ctx, newBenchmark(ns, "first")); err != nil {
		t.Fatal(err)
	}
	firstJob := waitForJob(t, ns, jobName("first", "direct"))
	if err := testClient.Create(ctx, newBenchmark(ns, "second")); err != nil {
		t.Fatal(err)
	}
	waitForPhase(t, ns, "second", benchv1.PhaseQueued)
	finishJob(t, firstJob, 0, resultReport(1000, nil))
	waitForPhase(t, ns, "first", benchv1.PhaseCompleted)
	eventually(t, 10*time.Second, "the queued benchmark's Job, well before its poll", func() error {
		return testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: jobName("second", "direct")}, &batchv1.Job{})
	})
}

// startInOneSecond creates first right after a second begins, waits for the operator to start it,
// and creates second in the same second; it tries again in a new namespace when the machine was
// too slow for that, and returns the namespace and first's Job.
func startInOneSecond(t *testing.T, first, second string) (string, *batchv1.Job) {
	t.Helper()
	ctx := context.Background()
	for attempt := 0; attempt < 5; attempt++ {
		ns := newNamespace(t)
		createCNPGSecrets(t, ns)
		op := startOperatorAs(t, operatorUser, []string{ns})
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		a := newBenchmark(ns, first)
		if err := testClient.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		for getBenchmark(t, ns, first).Status.StartTime == nil {
			time.Sleep(10 * time.Millisecond)
		}
		b := newBenchmark(ns, second)
		if err := testClient.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return ns, waitForJob(t, ns, jobName(first, "direct"))
		}
		op.Stop()
	}
	t.Fatal("could not create two benchmarks in one second in 5 attempts")
	return "", nil
}

// TestServerLockByIdentity: a benchmark of a CloudNativePG cluster and one of an external host that
// is the cluster's -rw Service IP measure one server; the Lease outlives an operator restart.
func TestServerLockByIdentity(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	createExternalSecrets(t, ns)
	ctx := context.Background()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-rw"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}}
	if err := testClient.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	first := startOperatorAs(t, operatorUser, []string{ns})
	if err := testClient.Create(ctx, newBenchmark(ns, "by-cluster")); err != nil {
		t.Fatal(err)
	}
	clusterJob := waitForJob(t, ns, jobName("by-cluster", "direct"))
	// An operator restarted while the first runs: the Lease, not its memory, holds the server.
	first.Stop()
	startOperatorAs(t, operatorUser, []string{ns})
	byIP := newBenchmark(ns, "by-ip")
	byIP.Spec.Server = externalServer()
	byIP.Spec.Server.External.Host = svc.Spec.ClusterIP
	if err := testClient.Create(ctx, byIP); err != nil {
		t.Fatal(err)
	}
	queued := waitForPhase(t, ns, "by-ip", benchv1.PhaseQueued)
	if c := meta.FindStatusCondition(queued.Status.Conditions, conditions.Queued); c == nil ||
		!strings.Contains(c.Message, "by-cluster") || !strings.Contains(c.Message, svc.Spec.ClusterIP+":5432") {
		t.Fatalf("Queued condition %+v, want it to name by-cluster and the server %s:5432", c, svc.Spec.ClusterIP)
	}
	finishJob(t, clusterJob, 0, resultReport(1000, nil))
	waitForPhase(t, ns, "by-cluster", benchv1.PhaseCompleted)
	waitForJob(t, ns, jobName("by-ip", "direct"))
}

// TestServerLockOfAnotherNamespacesIP: a benchmark whose host is the cluster IP of another
// namespace's Service does not take that server's place in its queue: an IP is no name the webhook
// can check, so the team whose server it is keeps its place.
func TestServerLockOfAnotherNamespacesIP(t *testing.T) {
	needsEnvtest(t)
	victim, other := newNamespace(t), newNamespace(t)
	createCNPGSecrets(t, victim)
	createExternalSecrets(t, other)
	ctx := context.Background()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "pg-rw"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}}
	if err := testClient.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	startOperatorAs(t, operatorUser, []string{victim, other})
	if err := testClient.Create(ctx, newBenchmark(victim, "own")); err != nil {
		t.Fatal(err)
	}
	waitForJob(t, victim, jobName("own", "direct"))
	byIP := newBenchmark(other, "by-their-ip")
	byIP.Spec.Server = externalServer()
	byIP.Spec.Server.External.Host = svc.Spec.ClusterIP
	if err := testClient.Create(ctx, byIP); err != nil {
		t.Fatal(err)
	}
	// Not queued behind the victim's benchmark: its own run starts while that one runs.
	waitForJob(t, other, jobName("by-their-ip", "direct"))
	if tb := getBenchmark(t, other, "by-their-ip"); tb.Status.Phase == benchv1.PhaseQueued {
		t.Fatalf("queued behind another namespace's server: %+v", tb.Status.Conditions)
	}
}

// assertNoServerLeases checks that no benchmark of ns holds a server Lease once every one ended.
func assertNoServerLeases(t *testing.T, ns string) {
	t.Helper()
	eventually(t, 10*time.Second, "the server Leases of "+ns+" released", func() error {
		leases := &coordinationv1.LeaseList{}
		if err := testClient.List(context.Background(), leases, client.InNamespace(lockNamespace)); err != nil {
			return err
		}
		for _, l := range leases.Items {
			if strings.HasPrefix(l.Annotations[annotationLockHolder], ns+"/") {
				return fmt.Errorf("Lease %s still held by %s", l.Name, l.Annotations[annotationLockHolder])
			}
		}
		return nil
	})
}
