// Command demo deploys the demo PostgreSQL, runs the demo sample benchmark and prints its results.
// hack/demo.sh runs it once the cluster, the images and the operator are in place.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

func main() {
	sample := flag.String("sample", "config/samples/bench_v1alpha1_tunnelbenchmark_demo.yaml", "the benchmark to run")
	pgImage := flag.String("postgres-image", "docker.io/tunnelbench/postgres:15", "image of the demo PostgreSQL")
	timeout := flag.Duration("timeout", 15*time.Minute, "how long to wait for the benchmark")
	flag.Parse()
	if err := run(*sample, *pgImage, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(samplePath, pgImage string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, _, err := fixture.Client()
	if err != nil {
		return err
	}

	b, err := os.ReadFile(samplePath)
	if err != nil {
		return err
	}
	tb := &benchv1.TunnelBenchmark{}
	if err := yaml.UnmarshalStrict(b, tb); err != nil {
		return fmt.Errorf("%s: %w", samplePath, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tb.Namespace,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	fmt.Printf("Deploying PostgreSQL 15 with TLS in namespace %s\n", tb.Namespace)
	if _, err := fixture.DeployPostgres(ctx, c, tb.Namespace, pgImage, 5*time.Minute); err != nil {
		return err
	}

	// The spec is immutable: a new run is a new object.
	old := &benchv1.TunnelBenchmark{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(tb), old); err == nil {
		fmt.Printf("Deleting the previous run of %s\n", tb.Name)
		if err := c.Delete(ctx, old); err != nil {
			return err
		}
		for c.Get(ctx, client.ObjectKeyFromObject(tb), old) == nil {
			time.Sleep(500 * time.Millisecond)
		}
	}
	if err := fixture.CreateBenchmark(ctx, c, tb); err != nil {
		return err
	}
	fmt.Printf("Running %s/%s (%d transports)\n", tb.Namespace, tb.Name, len(tb.Spec.Transports))
	last := ""
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(tb), tb); err != nil {
			return err
		}
		line := fmt.Sprintf("  %s %s", tb.Status.Phase, tb.Status.Progress)
		if line != last && tb.Status.Phase != "" {
			fmt.Println(line)
			last = line
		}
		if tb.Status.Phase.IsTerminal() {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the benchmark did not end within %s", timeout)
		case <-time.After(2 * time.Second):
		}
	}
	if tb.Status.Phase == benchv1.PhaseFailed {
		c := meta.FindStatusCondition(tb.Status.Conditions, conditions.Failed)
		return fmt.Errorf("the benchmark failed: %s: %s", c.Reason, c.Message)
	}
	// The results are the plugin's to print (hack/demo.sh runs `kubectl tunnelbench report`).
	return nil
}
