package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/internal/operator/runseal"
)

// runSeal reads (or makes) the key of the Secret named namespace/name that seals the schedules'
// runs. Without one, the schedules' controller refuses to run (it could not tell its runs from
// benchmarks that claim to be), saying so at start.
func runSeal(cfg *rest.Config, scheme *runtime.Scheme, secret string) (runseal.Key, error) {
	ns, name, ok := strings.Cut(secret, "/")
	if !ok || ns == "" || name == "" {
		return nil, fmt.Errorf("--run-seal-secret %q is not namespace/name", secret)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return runseal.Ensure(ctx, c, types.NamespacedName{Namespace: ns, Name: name})
}
