package main

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/internal/operator/uninstall"
)

// endBenchmarks is the chart's pre-delete hook: every benchmark of the watched namespaces ended
// and released before the operator goes. It exits non-zero only when it could not talk to the
// API server; a finalizer it had to remove itself is logged, not an error (the uninstall goes on).
func endBenchmarks(cfg *rest.Config, scheme *runtime.Scheme, namespaces []string, wait time.Duration, log logr.Logger) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait+time.Minute)
	defer cancel()
	released, err := uninstall.EndAll(ctx, c, namespaces, wait, log)
	if err != nil {
		return err
	}
	log.Info("Every benchmark ended", "releasedWithoutTheOperator", len(released))
	return nil
}
