//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

// helmUninstallEndsBenchmarks: `helm uninstall` while a benchmark runs with the cleanup finalizer
// (a chaos-mesh link) cancels it through the chart's pre-delete hook, the operator ends it and
// releases it before it goes, and deleting the benchmark's namespace afterwards does not hang in
// Terminating. The operator is gone afterwards: this case comes last.
func helmUninstallEndsBenchmarks(t *testing.T, serverNS string, pg *fixture.Postgres) {
	ns := newNamespace(t, "e2e-uninstall")
	copyServerSecrets(t, serverNS, ns)
	tb := benchmark(ns, "running-at-uninstall", pg, fixture.CredentialsSecret)
	tb.Spec.Transports = tb.Spec.Transports[:1]
	tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "50Mbit", Emulator: benchv1.EmulatorChaosMesh}
	tb.Spec.Load.Builtin, tb.Spec.Load.Script = "", "select 1;"
	tb.Spec.Load.Duration = &metav1.Duration{Duration: 5 * time.Minute}
	if err := fixture.CreateBenchmark(ctx, k8s, tb); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 3*time.Minute, time.Second, "the benchmark to run, holding its finalizer", func() error {
		got := &benchv1.TunnelBenchmark{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tb), got); err != nil {
			return err
		}
		if got.Status.Phase != benchv1.PhaseRunning || !slices.Contains(got.Finalizers, benchv1.CleanupFinalizer) {
			return fmt.Errorf("phase %q, finalizers %v", got.Status.Phase, got.Finalizers)
		}
		return nil
	})
	start := time.Now()
	if out, err := run(t, env(t, "HELM"), "uninstall", release, "--namespace", operatorNamespace, "--wait", "--timeout", "5m"); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, out)
	}
	t.Logf("helm uninstall took %s", time.Since(start).Round(time.Second))
	got := &benchv1.TunnelBenchmark{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tb), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != benchv1.PhaseCancelled || len(got.Finalizers) != 0 {
		t.Errorf("after helm uninstall: phase %q, finalizers %v; want Cancelled and released", got.Status.Phase, got.Finalizers)
	}
	deleteNamespace(t, ns)
}

// deleteNamespace deletes ns and waits until it is gone: its pods ended, the CPU they requested is
// free for the next case.
func deleteNamespace(t *testing.T, ns string) {
	t.Helper()
	if t.Failed() {
		// What a person would look at first, while it is still there.
		dump(t, ns)
	}
	if err := k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	poll.Until(t, 2*time.Minute, time.Second, "namespace "+ns+" to go", func() error {
		err := k8s.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("still there")
	})
}

// copyServerSecrets copies the fixture server's Secrets named (its credentials and CA when none is
// named) into ns, for a benchmark there.
func copyServerSecrets(t *testing.T, serverNS, ns string, names ...string) {
	t.Helper()
	if len(names) == 0 {
		names = []string{fixture.CredentialsSecret, fixture.CASecret}
	}
	for _, name := range names {
		s := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: serverNS, Name: name}, s); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: s.Data}); err != nil {
			t.Fatal(err)
		}
	}
}
