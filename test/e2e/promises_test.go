//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

// The defects of the issue "who may do what through a benchmark", each reproduced as a new user
// found it after `make demo`: a shell spelt with a space, a 40 kB pgbench error, two benchmarks of
// one server in one file.

// shellSpellingRefused: the script, `\ shell` printing the password as a pgbench error, is
// refused at `kubectl apply` (it was accepted, and the password reached status and a Warning event).
func shellSpellingRefused(t *testing.T, ns string, pg *fixture.Postgres) {
	tb := benchmark(ns, "shell-spelling", pg, fixture.CredentialsSecret)
	tb.Spec.Load.Builtin = ""
	tb.Spec.Load.Script = "select 1;\n\\ shell echo \"pgbench: error: leak-$PGPASSWORD\"; kill -9 $PPID\n"
	out, err := kubectlApply(t, tb)
	if err == nil || !strings.Contains(out, "spec.load.script") || !strings.Contains(out, "in any spelling") {
		t.Errorf("kubectl apply: %v\n%s", err, out)
	}
}

// longErrorEnds: pgbench's error for `select repeat('x',40000)::int` is 40,113 characters; the
// benchmark stayed Running past its timeout while every status write failed. It fails at once, its
// message cut with the cut said.
func longErrorEnds(t *testing.T, ns string, pg *fixture.Postgres) {
	tb := benchmark(ns, "long-error", pg, fixture.CredentialsSecret)
	tb.Spec.Transports = tb.Spec.Transports[:1]
	tb.Spec.Load.Builtin = ""
	tb.Spec.Load.Script = "select repeat('x', 40000)::int;"
	tb.Spec.Timeout = &metav1.Duration{Duration: 3 * time.Minute}
	if err := fixture.CreateBenchmark(ctx, k8s, tb); err != nil {
		t.Fatal(err)
	}
	end := waitForEnd(t, ns, tb.Name, queued+3*time.Minute)
	assertFailed(t, end, conditions.ReasonPgbenchError, "bytes cut")
	if c := meta.FindStatusCondition(end.Status.Conditions, conditions.Failed); c != nil &&
		(!strings.Contains(c.Message, "invalid input syntax for type integer") || len(c.Message) > 4096) {
		t.Errorf("a message of %d bytes that does not say what failed: %.200s", len(c.Message), c.Message)
	}
}

// oneFileTwoBenchmarks: zz-race and aa-race of one server, applied in one file (zz first), were
// created in the same second and both ran. The second waits for the first: their runs never
// overlap.
func oneFileTwoBenchmarks(t *testing.T, ns string, pg *fixture.Postgres) {
	var docs []string
	for _, name := range []string{"zz-race", "aa-race"} {
		tb := benchmark(ns, name, pg, fixture.CredentialsSecret)
		tb.Spec.Transports = tb.Spec.Transports[:1]
		// Each drops and creates pgbench's tables: run at once, one would fail on the other's.
		tb.Spec.Load.Initialize = true
		b, err := yaml.Marshal(tb)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, "apiVersion: bench.tunnelbench.io/v1alpha1\nkind: TunnelBenchmark\n"+string(b))
	}
	cmd := exec.Command("kubectl", "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(strings.Join(docs, "---\n"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	zz := waitForEnd(t, ns, "zz-race", queued+4*time.Minute)
	aa := waitForEnd(t, ns, "aa-race", queued+4*time.Minute)
	if zz.Status.Phase != benchv1.PhaseCompleted || aa.Status.Phase != benchv1.PhaseCompleted {
		t.Fatalf("phases %s, %s", zz.Status.Phase, aa.Status.Phase)
	}
	first, second := zz, aa
	if aa.Status.StartTime.Before(zz.Status.StartTime) {
		first, second = aa, zz
	}
	start := second.Status.Results[0].Runs[0].StartTime
	if start == nil || start.Before(first.Status.CompletionTime) {
		t.Errorf("%s's run started at %v, before %s ended at %v: both measured the server at once",
			second.Name, start, first.Name, first.Status.CompletionTime)
	}
	t.Logf("created %s and %s; %s ran first, %s waited (%s)", zz.CreationTimestamp, aa.CreationTimestamp,
		first.Name, second.Name, fmt.Sprint(second.Status.StartTime))
}

func kubectlApply(t *testing.T, tb *benchv1.TunnelBenchmark) (string, error) {
	t.Helper()
	return kubectlApplyAs(t, tb)
}
