package benchmark

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// TestNeverTouchesWhatItDoesNotOwn: an object of the name the operator would give a peer, made by
// someone else, is neither used nor deleted: the benchmark fails at once, naming it, and the object
// is still there after the benchmark has ended and after it is deleted.
func TestNeverTouchesWhatItDoesNotOwn(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createExternalSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()

	tests := []struct {
		name      string
		benchmark func() *benchv1.TunnelBenchmark
		// theirs is the object someone else made under the name of one of the benchmark's peers.
		theirs func(tb *benchv1.TunnelBenchmark) client.Object
		kind   string
	}{
		{
			name: "a user's CloudNativePG Cluster named <benchmark>-pg",
			benchmark: func() *benchv1.TunnelBenchmark {
				tb := newBenchmark(ns, "orders")
				tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{}}
				return tb
			},
			theirs: func(tb *benchv1.TunnelBenchmark) client.Object {
				u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
					"instances": int64(1), "storage": map[string]any{"size": "1Gi"}}}}
				u.SetGroupVersionKind(specs.CNPGClusterGVK)
				u.SetNamespace(ns)
				u.SetName(tb.ManagedClusterName())
				return u
			},
			kind: "Cluster",
		},
		{
			name: "a Service under the pooler's name",
			benchmark: func() *benchv1.TunnelBenchmark {
				tb := newBenchmark(ns, "a", benchv1.TransportSpec{Name: "b-c", Type: benchv1.TransportPooler})
				useExternalServer(tb)
				return tb
			},
			theirs: func(tb *benchv1.TunnelBenchmark) client.Object {
				return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tb.PoolerName("b-c")},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}}
			},
			kind: "Service",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := tt.benchmark()
			theirs := tt.theirs(tb)
			if err := testClient.Create(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			if err := testClient.Create(ctx, tb); err != nil {
				t.Fatal(err)
			}
			done := waitForPhase(t, ns, tb.Name, benchv1.PhaseFailed)
			c := meta.FindStatusCondition(done.Status.Conditions, conditions.Failed)
			if c == nil || c.Reason != conditions.ReasonOwnershipConflict ||
				!strings.Contains(c.Message, tt.kind+" "+ns+"/"+theirs.GetName()) || !strings.Contains(c.Message, "has no controller") {
				t.Errorf("Failed condition %+v", c)
			}
			if len(listJobs(t, ns)) != 0 {
				t.Error("a benchmark that refused a peer ran a Job")
			}
			survives := func() error {
				got := emptyLike(theirs)
				if err := testClient.Get(ctx, client.ObjectKeyFromObject(theirs), got); err != nil {
					return err
				}
				if !got.GetDeletionTimestamp().IsZero() {
					return errorf("%s is being deleted", got.GetName())
				}
				return nil
			}
			consistently(t, 2*time.Second, "their object survives the ended benchmark", survives)
			if err := testClient.Delete(ctx, done); err != nil {
				t.Fatal(err)
			}
			consistently(t, 2*time.Second, "their object survives the deleted benchmark", survives)
		})
	}
}

// TestNamesOfTwoUserStringsNeverCollide: benchmark "a" with transport "b-c" and benchmark "a-b"
// with transport "c" run side by side, each with its own pooler and Job.
func TestNamesOfTwoUserStringsNeverCollide(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createExternalSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()
	var poolers []string
	for _, pair := range [][2]string{{"a", "b-c"}, {"a-b", "c"}} {
		tb := newBenchmark(ns, pair[0], benchv1.TransportSpec{Name: pair[1], Type: benchv1.TransportPooler})
		useExternalServer(tb)
		if err := testClient.Create(ctx, tb); err != nil {
			t.Fatal(err)
		}
		poolers = append(poolers, tb.PoolerName(pair[1]))
	}
	if poolers[0] == poolers[1] {
		t.Fatalf("both benchmarks name their pooler %s", poolers[0])
	}
	for i, name := range poolers {
		svc := &corev1.Service{}
		eventually(t, 15*time.Second, "pooler "+name, func() error {
			return testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc)
		})
		if ref := metav1.GetControllerOf(svc); ref == nil || ref.Name != []string{"a", "a-b"}[i] {
			t.Errorf("pooler %s is controlled by %+v", name, ref)
		}
	}
}

// TestIssuedSecretsGoWithTheBenchmark: cert-manager's Secret carries no owner reference; the
// operator removes it (by the benchmark's UID label) once the transport it served is done, and
// leaves alone a Secret without that label.
func TestIssuedSecretsGoWithTheBenchmark(t *testing.T) {
	ctx := context.Background()
	ns, tb, name := startIssuedClientCertificate(t, "issued-client")
	finishJob(t, waitForJob(t, ns, jobName(tb.Name, "tls")), 0, resultReport(1000, nil))
	waitForPhase(t, ns, tb.Name, benchv1.PhaseCompleted)
	eventually(t, 10*time.Second, "the issued Secret removed", func() error {
		err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errorf("Secret %s still there (%v)", name, err)
	})
	if getSecretOrNil(t, ns, "pg-app") == nil {
		t.Error("the credentials Secret, which the benchmark does not own, was removed")
	}
	eventually(t, 10*time.Second, "the finalizer removed once the benchmark has cleaned up", func() error {
		if f := getBenchmark(t, ns, tb.Name).Finalizers; len(f) != 0 {
			return errorf("finalizers %v", f)
		}
		return nil
	})
}

// TestIssuedSecretsGoWhenARunningBenchmarkIsDeleted: a benchmark deleted while it runs is held by
// the cleanup finalizer until cert-manager's Secret is removed, then goes.
func TestIssuedSecretsGoWhenARunningBenchmarkIsDeleted(t *testing.T) {
	ctx := context.Background()
	ns, tb, name := startIssuedClientCertificate(t, "deleted-midway")
	waitForJob(t, ns, jobName(tb.Name, "tls"))
	if got := getBenchmark(t, ns, tb.Name); !slices.Contains(got.Finalizers, CleanupFinalizer) {
		t.Fatalf("a running benchmark with an issuer has finalizers %v", got.Finalizers)
	}
	if err := testClient.Delete(ctx, tb); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the Secret and the benchmark gone", func() error {
		if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			return errorf("Secret %s still there (%v)", name, err)
		}
		if err := testClient.Get(ctx, client.ObjectKeyFromObject(tb), &benchv1.TunnelBenchmark{}); !apierrors.IsNotFound(err) {
			return errorf("the benchmark is still there (%v)", err)
		}
		return nil
	})
}

// startIssuedClientCertificate runs a benchmark whose TLS transport presents a client certificate
// issued by cert-manager (played by the test), and returns its namespace, the benchmark and the
// name of the issued Certificate and Secret.
func startIssuedClientCertificate(t *testing.T, name string) (string, *benchv1.TunnelBenchmark, string) {
	t.Helper()
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	tb := newBenchmark(ns, name, benchv1.TransportSpec{Name: "tls", Type: benchv1.TransportTLS,
		TLS: &benchv1.TLSTransport{ClientCertificate: &benchv1.ClientCertificate{CommonName: "app"}}})
	tb.Spec.TLS = issuer()
	if err := testClient.Create(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	cert := tb.ClientCertificateName("tls")
	issue(t, waitForCertificate(t, ns, cert))
	return ns, tb, cert
}

// TestReapplyWaitsForTheEarlierBenchmark: a benchmark deleted and applied again at once finds the
// objects of the earlier one (same derived names) still there, as the garbage collector removes
// them on its own time. It waits for them, saying so, instead of failing OwnershipConflict, and
// runs once they are gone (envtest has no garbage collector: the test plays it).
func TestReapplyWaitsForTheEarlierBenchmark(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()
	first := newBenchmark(ns, "again")
	if err := testClient.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	oldJob := waitForJob(t, ns, jobName(first.Name, "direct"))
	if err := testClient.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the first benchmark gone", func() error {
		if err := testClient.Get(ctx, client.ObjectKeyFromObject(first), &benchv1.TunnelBenchmark{}); !apierrors.IsNotFound(err) {
			return errorf("still there (%v)", err)
		}
		return nil
	})
	second := newBenchmark(ns, "again")
	if err := testClient.Create(ctx, second); err != nil {
		t.Fatal(err)
	}
	waiting := func() error {
		got := getBenchmark(t, ns, second.Name)
		c := meta.FindStatusCondition(got.Status.Conditions, conditions.Progressing)
		switch {
		case got.Status.Phase == benchv1.PhaseFailed:
			return errorf("failed: %+v", meta.FindStatusCondition(got.Status.Conditions, conditions.Failed))
		case c == nil || !strings.Contains(c.Message, "earlier benchmark of this name"):
			return errorf("Progressing %+v", c)
		}
		return nil
	}
	eventually(t, 10*time.Second, "the second benchmark to wait for the first one's objects", waiting)
	consistently(t, 2*time.Second, "the second benchmark to keep waiting", waiting)

	// The garbage collector's part: everything the first benchmark owned goes.
	for _, list := range []client.ObjectList{&batchv1.JobList{}, &corev1.ConfigMapList{}, &corev1.ServiceAccountList{},
		&rbacv1.RoleList{}, &rbacv1.RoleBindingList{}} {
		if err := testClient.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		items, _ := meta.ExtractList(list)
		for _, item := range items {
			o := item.(client.Object)
			if ref := metav1.GetControllerOf(o); ref != nil && ref.UID == first.UID {
				if err := testClient.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	eventually(t, 15*time.Second, "the second benchmark's own Job", func() error {
		job := &batchv1.Job{}
		if err := testClient.Get(ctx, client.ObjectKeyFromObject(oldJob), job); err != nil {
			return err
		}
		if !metav1.IsControlledBy(job, second) {
			return errorf("Job %s is still the first benchmark's", job.Name)
		}
		return nil
	})
}
