//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

// queued is how long a benchmark of the shared server may wait for the others of this group: the
// operator runs one benchmark of a server at a time (the server's Lease), so the group's benchmarks
// of pg queue behind each other, each a few seconds to half a minute.
const queued = 3 * time.Minute

// correctnessSideBySide runs the cases that assert what the operator does, not what a path costs,
// in parallel: a failure's reason (wrong password, unreachable server, a 40 kB error), a refusal at
// apply, a queue, a cancel, a delete, and CloudNativePG servers (in a namespace of their own). None
// reads a figure, so the load of one cannot falsify another; their benchmarks of pg queue on its
// Lease as any user's would, which is why the waits below allow for the queue.
func correctnessSideBySide(t *testing.T, ns string, pg *fixture.Postgres) {
	t.Run("CloudNativePG servers, managed and existing", func(t *testing.T) {
		t.Parallel()
		cloudNativePG(t)
	})

	t.Run("an invalid manifest is rejected at apply with the field named", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name, transports, load, runner string
			want                           []string
		}{
			// The CRD's own rule (CEL).
			{"more threads than clients", "[{name: direct, type: direct}]", "{builtin: select-only, clients: 2, threads: 4}", "{}",
				[]string{"spec.load.threads must not exceed spec.load.clients"}},
			// A transport's rule, checked in Go by the admission webhook (transport.Validate): every
			// pod would hold the same WireGuard key, and the gateway has one peer.
			{"WireGuard from two runner pods", "[{name: wg, type: vpn}]", "{builtin: select-only, clients: 4, threads: 2}", "{pods: 2}",
				[]string{"spec.runner.pods", "a WireGuard transport runs from one runner pod yet"}},
			// The Job's pod would be refused at every create: refused here, before anything runs.
			{"a runner's CPU request above its limit", "[{name: direct, type: direct}]", "{builtin: select-only}",
				"{resources: {requests: {cpu: 100m}, limits: {cpu: 50m}}}",
				[]string{"spec.runner.resources", "must not exceed its limit"}},
		} {
			manifest := fmt.Sprintf(`apiVersion: bench.tunnelbench.io/v1alpha1
kind: TunnelBenchmark
metadata: {name: invalid, namespace: %s}
spec:
  server: {external: {host: %s, database: app, credentialsSecret: {name: %s}}}
  transports: %s
  load: %s
  runner: %s
`, ns, pg.Host, fixture.CredentialsSecret, tc.transports, tc.load, tc.runner)
			cmd := exec.Command("kubectl", "apply", "-f", "-")
			cmd.Stdin = strings.NewReader(manifest)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Errorf("%s: kubectl apply accepted it:\n%s", tc.name, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("%s: kubectl apply: %v, without %q:\n%s", tc.name, err, w, out)
				}
			}
		}
	})

	t.Run("a wrong password fails with AuthenticationFailed", func(t *testing.T) {
		t.Parallel()
		wrong := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wrong-password"},
			Type: corev1.SecretTypeBasicAuth, StringData: map[string]string{"username": "app", "password": "not-" + pg.AppPassword}}
		if err := k8s.Create(ctx, wrong); err != nil {
			t.Fatal(err)
		}
		tb := benchmark(ns, "wrong-password", pg, wrong.Name)
		if err := fixture.CreateBenchmark(ctx, k8s, tb); err != nil {
			t.Fatal(err)
		}
		assertFailed(t, waitForEnd(t, ns, tb.Name, queued+3*time.Minute), conditions.ReasonAuthenticationFailed, "password authentication failed")
	})

	t.Run("an unreachable server fails with ServerUnreachable", func(t *testing.T) {
		t.Parallel()
		tb := benchmark(ns, "unreachable", pg, fixture.CredentialsSecret)
		tb.Spec.Server.External.Host = "nothing-here." + ns + ".svc"
		tb.Spec.Transports = tb.Spec.Transports[:1]
		if err := fixture.CreateBenchmark(ctx, k8s, tb); err != nil {
			t.Fatal(err)
		}
		assertFailed(t, waitForEnd(t, ns, tb.Name, 3*time.Minute), conditions.ReasonServerUnreachable, "did not answer within 20s")
	})

	t.Run("a shell spelt as pgbench reads it is refused at apply", func(t *testing.T) {
		t.Parallel()
		shellSpellingRefused(t, ns, pg)
	})

	t.Run("a 40 kB pgbench error ends the benchmark, its message cut", func(t *testing.T) {
		t.Parallel()
		longErrorEnds(t, ns, pg)
	})

	t.Run("two benchmarks of one server in one file never run at once", func(t *testing.T) {
		t.Parallel()
		oneFileTwoBenchmarks(t, ns, pg)
	})

	t.Run("cancelling a running benchmark stops it within seconds", func(t *testing.T) {
		t.Parallel()
		// The finished runs a cancelled benchmark keeps are checked in envtest; here, that the
		// real Job and pod stop.
		tb := benchmark(ns, "cancelled", pg, fixture.CredentialsSecret)
		tb.Spec.Transports = tb.Spec.Transports[:1]
		tb.Spec.Load.Duration = &metav1.Duration{Duration: 3 * time.Minute}
		tb.Spec.Load.ProgressInterval = &metav1.Duration{Duration: time.Second}
		if err := fixture.CreateBenchmark(ctx, k8s, tb); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, queued+2*time.Minute, time.Second, "the load measuring", func() error {
			cur := &benchv1.TunnelBenchmark{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(tb), cur); err != nil {
				return err
			}
			if cur.Status.Phase.IsTerminal() {
				t.Fatalf("ended before it could be cancelled: %s %+v", cur.Status.Phase, cur.Status.Conditions)
			}
			if l := cur.Status.Live; l == nil || l.Phase != "load" || l.TPS == 0 {
				return fmt.Errorf("live %+v, phase %s", cur.Status.Live, cur.Status.Phase)
			}
			return nil
		})
		cancelled := time.Now()
		if err := k8s.Patch(ctx, tb, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`))); err != nil {
			t.Fatal(err)
		}
		end := waitForEnd(t, ns, tb.Name, time.Minute)
		if end.Status.Phase != benchv1.PhaseCancelled || len(end.Status.Results) != 0 {
			t.Fatalf("phase %s, results %+v", end.Status.Phase, end.Status.Results)
		}
		poll.Until(t, time.Minute, time.Second, "the runner pod gone", func() error {
			pods := &corev1.PodList{}
			if err := k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{benchv1.LabelBenchmark: tb.Name}); err != nil {
				return err
			}
			if len(pods.Items) > 0 {
				return fmt.Errorf("%d pods left", len(pods.Items))
			}
			return nil
		})
		t.Logf("Cancelled %.0f s after spec.cancel, its pod gone %.0f s after", end.Status.CompletionTime.Sub(cancelled).Seconds(),
			time.Since(cancelled).Seconds())
	})

	t.Run("deleting a running benchmark removes its Jobs and pods", func(t *testing.T) {
		t.Parallel()
		tb := benchmark(ns, "deleted", pg, fixture.CredentialsSecret)
		tb.Spec.Load.Duration = &metav1.Duration{Duration: 5 * time.Minute}
		tb.Spec.Transports = tb.Spec.Transports[:1]
		if err := fixture.CreateBenchmark(ctx, k8s, tb); err != nil {
			t.Fatal(err)
		}
		sel := client.MatchingLabels{benchv1.LabelBenchmark: tb.Name}
		poll.Until(t, queued+2*time.Minute, time.Second, "a running runner pod", func() error {
			pods := &corev1.PodList{}
			if err := k8s.List(ctx, pods, client.InNamespace(ns), sel); err != nil {
				return err
			}
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning {
					return nil
				}
			}
			return fmt.Errorf("%d pods, none running", len(pods.Items))
		})
		if err := k8s.Delete(ctx, tb); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, 2*time.Minute, time.Second, "Jobs, pods and Secrets gone", func() error {
			jobs, pods, secrets := &batchv1.JobList{}, &corev1.PodList{}, &corev1.SecretList{}
			for _, l := range []client.ObjectList{jobs, pods, secrets} {
				if err := k8s.List(ctx, l, client.InNamespace(ns), sel); err != nil {
					return err
				}
			}
			if n := len(jobs.Items) + len(pods.Items) + len(secrets.Items); n > 0 {
				return fmt.Errorf("%d Jobs, %d pods, %d Secrets left", len(jobs.Items), len(pods.Items), len(secrets.Items))
			}
			return nil
		})
	})
}
