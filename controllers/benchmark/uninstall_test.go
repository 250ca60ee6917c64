package benchmark

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/uninstall"
)

// operatorClient is a client with the operator's own rights, as the chart's uninstall hook runs.
func operatorClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(configAs(operatorUser), client.Options{Scheme: testScheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestUninstallEndsRunningBenchmarks: the uninstall hook, with the operator's rights, cancels a
// running benchmark that holds the cleanup finalizer; the operator stops it, removes what
// cert-manager wrote for it and its finalizer, so that deleting its namespace cannot hang.
func TestUninstallEndsRunningBenchmarks(t *testing.T) {
	ctx := context.Background()
	ns, tb, secret := startIssuedClientCertificate(t, "uninstalled")
	waitForJob(t, ns, jobName(tb.Name, "tls"))
	if !slices.Contains(getBenchmark(t, ns, tb.Name).Finalizers, CleanupFinalizer) {
		t.Fatal("the running benchmark holds no finalizer: the test proves nothing")
	}
	forced, err := uninstall.EndAll(ctx, operatorClient(t), []string{ns}, 30*time.Second, logf.Log)
	if err != nil || len(forced) != 0 {
		t.Fatalf("EndAll: %v, finalizers it had to remove itself: %v", err, forced)
	}
	got := getBenchmark(t, ns, tb.Name)
	if got.Status.Phase != benchv1.PhaseCancelled || len(got.Finalizers) != 0 {
		t.Errorf("phase %s, finalizers %v; want Cancelled and none", got.Status.Phase, got.Finalizers)
	}
	if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: secret}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("cert-manager's Secret %s is left: %v", secret, err)
	}
}

// TestUninstallReleasesWhatNoOperatorReleases: with no operator left to honour the cancel, the hook
// removes the finalizer itself after its wait, and says which benchmark it released.
func TestUninstallReleasesWhatNoOperatorReleases(t *testing.T) {
	needsEnvtest(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tb := newBenchmark(ns, "orphan", benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect})
	tb.Finalizers = []string{CleanupFinalizer}
	if err := testClient.Create(ctx, tb); err != nil {
		t.Fatal(err)
	}
	forced, err := uninstall.EndAll(ctx, operatorClient(t), []string{ns}, 2*time.Second, logf.Log)
	if err != nil || !slices.Equal(forced, []client.ObjectKey{client.ObjectKeyFromObject(tb)}) {
		t.Fatalf("EndAll: %v, released %v; want %s", err, forced, tb.Name)
	}
	got := getBenchmark(t, ns, tb.Name)
	if !got.Spec.Cancel || len(got.Finalizers) != 0 {
		t.Errorf("cancel %v, finalizers %v; want cancelled and released", got.Spec.Cancel, got.Finalizers)
	}
}
