// Package uninstall ends every benchmark before the operator goes (`helm uninstall`, a Helm
// pre-delete hook): a benchmark still running when the operator is removed keeps its pgbench Jobs
// loading the server, and its cleanup finalizer would hold it, and its namespace, in Terminating
// forever, since no operator is left to remove it.
//
// It cancels each running benchmark (spec.cancel, which the operator honours by stopping its Jobs
// and removing what garbage collection would leave), waits for the operator to end and release
// them, and only then removes a finalizer the operator did not, naming the benchmark.
package uninstall

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// Plan is what one look at the benchmarks asks for.
type Plan struct {
	// Cancel are the benchmarks still running: spec.cancel is set on them.
	Cancel []client.ObjectKey
	// Held are the benchmarks whose finalizer is still there (the operator will remove it once
	// they ended and cleaned up).
	Held []client.ObjectKey
}

// Done reports whether nothing is left to wait for.
func (p Plan) Done() bool { return len(p.Cancel) == 0 && len(p.Held) == 0 }

// Decide reads the benchmarks.
func Decide(items []benchv1.TunnelBenchmark) Plan {
	var p Plan
	for i := range items {
		tb := &items[i]
		key := client.ObjectKeyFromObject(tb)
		if !tb.Status.Phase.IsTerminal() && !tb.Spec.Cancel {
			p.Cancel = append(p.Cancel, key)
		}
		if controllerutil.ContainsFinalizer(tb, benchv1.CleanupFinalizer) {
			p.Held = append(p.Held, key)
		}
	}
	return p
}

// EndAll cancels every benchmark of namespaces (all when empty), waits up to wait for the
// operator to end them and remove their finalizers, then removes those it did not. It returns
// the benchmarks whose finalizer it had to remove itself: what they created may be left behind.
func EndAll(ctx context.Context, c client.Client, namespaces []string, wait time.Duration, log logr.Logger) ([]client.ObjectKey, error) {
	deadline := time.Now().Add(wait)
	for {
		items, err := list(ctx, c, namespaces)
		if err != nil {
			return nil, err
		}
		plan := Decide(items)
		if plan.Done() {
			return nil, nil
		}
		for _, key := range plan.Cancel {
			log.Info("Cancelling a running benchmark before the operator goes", "benchmark", key.String())
			if err := patch(ctx, c, key, func(tb *benchv1.TunnelBenchmark) { tb.Spec.Cancel = true }); err != nil {
				return nil, err
			}
		}
		if time.Now().After(deadline) {
			for _, key := range plan.Held {
				log.Info("The operator did not release this benchmark in time: removing its finalizer; "+
					"cert-manager Secrets or NetworkChaos labelled with it may be left", "benchmark", key.String())
				if err := patch(ctx, c, key, func(tb *benchv1.TunnelBenchmark) {
					controllerutil.RemoveFinalizer(tb, benchv1.CleanupFinalizer)
				}); err != nil {
					return nil, err
				}
			}
			return plan.Held, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func list(ctx context.Context, c client.Client, namespaces []string) ([]benchv1.TunnelBenchmark, error) {
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	var out []benchv1.TunnelBenchmark
	for _, ns := range slices.Compact(slices.Sorted(slices.Values(namespaces))) {
		l := &benchv1.TunnelBenchmarkList{}
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("cannot list the benchmarks: %w", err)
		}
		out = append(out, l.Items...)
	}
	return out, nil
}

// patch changes one benchmark by a merge patch with its resourceVersion; one gone is no error.
func patch(ctx context.Context, c client.Client, key client.ObjectKey, change func(*benchv1.TunnelBenchmark)) error {
	tb := &benchv1.TunnelBenchmark{}
	if err := c.Get(ctx, key, tb); err != nil {
		return client.IgnoreNotFound(err)
	}
	base := client.MergeFromWithOptions(tb.DeepCopy(), client.MergeFromWithOptimisticLock{})
	change(tb)
	err := c.Patch(ctx, tb, base)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone, or changed meanwhile: the next look decides again.
		return nil
	}
	return err
}
