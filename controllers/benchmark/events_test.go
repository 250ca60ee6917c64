package benchmark

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/events"
)

// TestEventsRecordedOnce: a pass whose status write conflicts is started over from what is stored
// and does the same things again; its events must not be recorded twice ("Accepted (x2)"). The
// operator's client answers its first status writes with the conflict the API server gives a
// write based on a stale read.
func TestEventsRecordedOnce(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	var conflicts atomic.Int32
	startOperator(t, func(r *TunnelBenchmarkReconciler) {
		r.Client = interceptor.NewClient(unwatched{r.Client}, interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch,
				opts ...client.SubResourcePatchOption) error {
				if _, ok := o.(*benchv1.TunnelBenchmark); ok && conflicts.Add(1) <= 2 {
					return apierrors.NewConflict(schema.GroupResource{Group: benchv1.GroupVersion.Group, Resource: "tunnelbenchmarks"},
						o.GetName(), errConflictForTest)
				}
				return c.SubResource(sub).Patch(ctx, o, p, opts...)
			},
		})
	})
	tb := newBenchmark(ns, "once")
	if err := testClient.Create(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	waitForJob(t, ns, jobName("once", "direct"))
	waitForPhase(t, ns, "once", benchv1.PhaseRunning)
	if conflicts.Load() < 3 {
		t.Fatalf("only %d status writes: the test forced no conflict", conflicts.Load())
	}
	time.Sleep(time.Second) // events are recorded asynchronously
	count := map[string]int32{}
	for _, e := range events.Wait(t, testClient, ns, "once", 10*time.Second, "Accepted", "JobCreated") {
		n := int32(1)
		if e.Series != nil {
			n = e.Series.Count
		}
		count[e.Reason] += n
	}
	for _, reason := range []string{"Accepted", "JobCreated"} {
		if count[reason] != 1 {
			t.Errorf("%s recorded %d times", reason, count[reason])
		}
	}
}

// unwatched lets the interceptor wrap the manager's client, which does not watch.
type unwatched struct{ client.Client }

func (unwatched) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errorf("the operator's client does not watch")
}

var errConflictForTest = errorf("the object has been modified; please apply your changes to the latest version")
