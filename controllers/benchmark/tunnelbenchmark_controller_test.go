package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/operator/admission"
)

// TestBenchmarkLifecycle walks a benchmark through initialization and two transports, playing
// the kubelet for each Job, and checks status, events, metrics and ownership on the way.
func TestBenchmarkLifecycle(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	op := startOperator(t)
	ctx := context.Background()

	tb := newBenchmark(ns, "lifecycle",
		benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect},
		benchv1.TransportSpec{Name: "tls", Type: benchv1.TransportTLS})
	tb.Spec.Load.Initialize = true
	tb.Spec.Load.Scale = 10
	if err := testClient.Create(ctx, inSpecOrder(tb)); err != nil {
		t.Fatal(err)
	}

	// Initialization runs first, alone, over a direct connection that may use TLS.
	initJob := waitForJob(t, ns, tb.JobName(benchv1.InitTransportLabel))
	assertOwnedBy(t, initJob, tb)
	assertArgs(t, initJob, "--init", "--scale=10")
	assertEnv(t, initJob, "PGSSLMODE", "prefer")
	assertEnv(t, initJob, "PGHOST", "pg-rw")
	assertEnv(t, initJob, "PGDATABASE", "app")
	waitForPhase(t, ns, "lifecycle", benchv1.PhaseInitializing)
	consistently(t, time.Second, "no transport Job during initialization", func() error {
		if n := len(listJobs(t, ns)); n != 1 {
			return fmt.Errorf("%d Jobs exist", n)
		}
		return nil
	})
	finishJob(t, initJob, 0, `{"command":"pgbench -i -s 10"}`)

	// Then the transports, one at a time, in spec order.
	direct := waitForJob(t, ns, jobName("lifecycle", "direct"))
	assertOwnedBy(t, direct, tb)
	assertEnv(t, direct, "PGSSLMODE", "disable")
	assertArgs(t, direct, "--builtin=select-only --protocol=prepared --clients=4 --threads=2", "--duration=10s --progress-interval=5s")
	running := waitForPhase(t, ns, "lifecycle", benchv1.PhaseRunning)
	assertCondition(t, running, conditions.Initialized, metav1.ConditionTrue, "Initialized")
	assertCondition(t, running, conditions.ServerResolved, metav1.ConditionTrue, "Resolved")
	consistently(t, time.Second, "the tls transport waits for direct", func() error {
		if n := len(listJobs(t, ns)); n != 2 {
			return fmt.Errorf("%d Jobs exist", n)
		}
		return nil
	})
	finishJob(t, direct, 0, resultReport(1000, nil))

	tlsJob := waitForJob(t, ns, jobName("lifecycle", "tls"))
	assertEnv(t, tlsJob, "PGSSLMODE", "verify-full")
	assertEnv(t, tlsJob, "PGSSLROOTCERT", "/etc/tunnelbench/server-ca/ca.crt")
	finishJob(t, tlsJob, 0, resultReport(400, &report.TLS{Version: "TLSv1.3", Cipher: "TLS_AES_256_GCM_SHA384"}))

	done := waitForPhase(t, ns, "lifecycle", benchv1.PhaseCompleted)
	assertCondition(t, done, conditions.Completed, metav1.ConditionTrue, "Completed")
	if o := done.Status.RunOrder; o == nil || o.Seed != *tb.Spec.Load.Seed || o.Order != benchv1.OrderInterleaved ||
		strings.Join(o.Rounds, "|") != "direct tls" {
		t.Errorf("status.runOrder %+v, want seed %d and the round \"direct tls\"", o, *tb.Spec.Load.Seed)
	}
	assertCondition(t, done, conditions.Progressing, metav1.ConditionFalse, "Completed")
	if done.Status.Progress != "2/2" || done.Status.CompletionTime == nil || done.Status.ObservedGeneration != done.Generation {
		t.Errorf("status progress=%q completionTime=%v observedGeneration=%d", done.Status.Progress,
			done.Status.CompletionTime, done.Status.ObservedGeneration)
	}
	if done.Status.Server != "pg-rw:5432/app" {
		t.Errorf("status.server = %q", done.Status.Server)
	}
	if len(done.Status.Results) != 2 {
		t.Fatalf("got %d results, want 2", len(done.Status.Results))
	}
	directRes, tlsRes := done.Status.Results[0], done.Status.Results[1]
	if directRes.Transport != "direct" || directRes.TPS != 1000 || directRes.Comparison.Verdict != benchv1.VerdictBaseline {
		t.Errorf("direct result = %+v", directRes)
	}
	// One repetition: a ratio, but no interval, so no verdict either way.
	if c := tlsRes.Comparison; tlsRes.Transport != "tls" || tlsRes.TPS != 400 || math.Abs(c.Ratio-0.4) > 1e-9 ||
		c.Lower != nil || c.Verdict != benchv1.VerdictIndistinguishable || !strings.Contains(c.Reason, "one repetition") {
		t.Errorf("tls result = %+v, comparison %+v", tlsRes, c)
	}
	if len(tlsRes.Runs) != 1 || tlsRes.Runs[0].Job != jobName("lifecycle", "tls") || tlsRes.Runs[0].Node != testNode {
		t.Errorf("tls runs = %+v", tlsRes.Runs)
	}
	if tlsRes.TLS == nil || tlsRes.TLS.Version != "TLSv1.3" || directRes.TLS != nil {
		t.Errorf("negotiated TLS: direct %+v, tls %+v", directRes.TLS, tlsRes.TLS)
	}
	if !strings.Contains(tlsRes.Connection, "sslmode=verify-full") || strings.Contains(tlsRes.Connection, "s3cret") {
		t.Errorf("tls connection string = %q", tlsRes.Connection)
	}
	if b := done.Status.Best; b == nil || b.Transport != "direct" || b.TPS != 1000 || b.Significant ||
		b.Summary != "tie: direct, tls" {
		t.Errorf("best = %+v", done.Status.Best)
	}

	// Nothing secret reaches status.
	if strings.Contains(fmt.Sprintf("%+v", done.Status), "s3cret-password") {
		t.Error("the password appears in status")
	}

	assertEvents(t, ns, "lifecycle", "Accepted", "JobCreated", "Initialized", "RunCompleted", "Completed")

	if got := gaugeValue(t, op, "tunnelbench_transport_tps", ns, "lifecycle", "tls"); got != 400 {
		t.Errorf("tps gauge for tls = %v, want 400", got)
	}
	if got := gaugeValue(t, op, "tunnelbench_transport_latency_average_seconds", ns, "lifecycle", "direct"); math.Abs(got-0.004) > 1e-9 {
		t.Errorf("latency gauge for direct = %v, want 0.004", got)
	}
	if got := phaseGauge(t, op, benchv1.PhaseCompleted); got < 1 {
		t.Errorf("benchmarks{phase=Completed} = %v", got)
	}

	// Deleting the benchmark removes its series (its Jobs go through their owner references).
	if err := testClient.Delete(ctx, done); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "metric series removed", func() error {
		if n := seriesCount(t, op, "tunnelbench_transport_tps", ns, "lifecycle"); n != 0 {
			return fmt.Errorf("%d series left", n)
		}
		return nil
	})
}

// TestFailuresAreExplained: a failed runner ends the benchmark in Failed with the runner's own
// classified reason and message, and later transports never start.
func TestFailuresAreExplained(t *testing.T) {
	needsEnvtest(t)
	tests := []struct {
		name        string
		exitCode    int32
		message     string
		wantReason  string
		wantMessage string
	}{
		{"authentication", 1, failureReport(conditions.ReasonAuthenticationFailed,
			`password authentication failed for user "app": check the user name and password in the credentials Secret`),
			conditions.ReasonAuthenticationFailed, "password authentication failed"},
		{"unreachable", 1, failureReport(conditions.ReasonServerUnreachable, "server pg-rw:5432 did not answer within 2m0s"),
			conditions.ReasonServerUnreachable, "did not answer"},
		{"pgbench error", 1, failureReport(conditions.ReasonPgbenchError,
			"pgbench run was aborted: client 0 script 0 aborted in command 0 query 0: ERROR:  division by zero"),
			conditions.ReasonPgbenchError, "division by zero"},
		// pgbench quotes the whole value: `select repeat('x',40000)::int` fails with 40,113 characters,
		// which no condition holds (the status write failed and the benchmark never ended).
		{"40 kB pgbench error", 1, failureReport(conditions.ReasonPgbenchError,
			`pgbench: error: client 0 script 0 aborted in command 0 query 0: ERROR:  invalid input syntax for type integer: "`+
				strings.Repeat("x", 40000)+`"`), conditions.ReasonPgbenchError, "bytes cut"},
		{"no report", 137, "", conditions.ReasonJobFailed, "runner container: Error (exit code 137)"},
		{"success without result", 0, `{"command":"pgbench"}`, conditions.ReasonJobFailed, "left no result"},
	}
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("fail-%d", i)
			tb := newBenchmark(ns, name,
				benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect},
				benchv1.TransportSpec{Name: "tls", Type: benchv1.TransportTLS})
			if err := testClient.Create(context.Background(), inSpecOrder(tb)); err != nil {
				t.Fatal(err)
			}
			finishJob(t, waitForJob(t, ns, jobName(name, "direct")), tt.exitCode, tt.message)
			failed := waitForPhase(t, ns, name, benchv1.PhaseFailed)
			c := assertCondition(t, failed, conditions.Failed, metav1.ConditionTrue, tt.wantReason)
			if !strings.Contains(c.Message, tt.wantMessage) || !strings.Contains(c.Message, "transport direct") {
				t.Errorf("Failed condition message %q does not name the transport and %q", c.Message, tt.wantMessage)
			}
			assertEvents(t, ns, name, tt.wantReason)
			consistently(t, time.Second, "no Job for the next transport", func() error {
				for _, j := range listJobs(t, ns) {
					if j.Name == jobName(name, "tls") {
						return fmt.Errorf("Job %s was created after a failure", j.Name)
					}
				}
				return nil
			})
		})
	}
}

// TestRepetitionsResumeAfterRestarts runs two transports three times each, interleaved, and
// stops the operator in the middle of round 2 and again right after a Job was created: the Jobs
// come in round-robin order, one per run and never a second, and the results hold every run with
// medians, spreads and paired intervals.
func TestRepetitionsResumeAfterRestarts(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	ctx := context.Background()
	tb := newBenchmark(ns, "restart",
		benchv1.TransportSpec{Name: "a", Type: benchv1.TransportDirect},
		benchv1.TransportSpec{Name: "b", Type: benchv1.TransportTLS})
	tb.Spec.Load.Repetitions = 3
	tb.Spec.Load.ConnectionStorm = &benchv1.ConnectionStorm{Connections: 100}
	if err := testClient.Create(ctx, inSpecOrder(tb)); err != nil {
		t.Fatal(err)
	}
	run := func(transport string, round int32) *batchv1.Job {
		t.Helper()
		job := waitForJob(t, ns, roundJobName("restart", transport, round))
		if got := job.Labels[benchv1.LabelRound]; got != fmt.Sprint(round) {
			t.Errorf("Job %s: round label %q", job.Name, got)
		}
		// The storm runs once per transport, in its last round (the one its result keeps).
		if storm := slices.Contains(job.Spec.Template.Spec.Containers[0].Args, "--storm=100"); storm != (round == 3) {
			t.Errorf("Job %s: storm %v in round %d", job.Name, storm, round)
		}
		if n := len(listJobs(t, ns)); n != int(round-1)*2+map[string]int{"a": 1, "b": 2}[transport] {
			t.Errorf("%d Jobs exist when %s round %d starts: the order is not round-robin", n, transport, round)
		}
		return job
	}
	aTPS := []float64{900, 1000, 950}
	bTPS := []float64{700, 780, 720}

	first := startOperator(t)
	finishJob(t, run("a", 1), 0, resultReport(aTPS[0], nil))
	finishJob(t, run("b", 1), 0, resultReport(bTPS[0], nil))
	finishJob(t, run("a", 2), 0, resultReport(aTPS[1], nil))
	b2 := run("b", 2)
	first.Stop() // crash in the middle of round 2

	// b's second run finishes while no operator runs.
	finishJob(t, b2, 0, resultReport(bTPS[1], nil))

	second := startOperator(t)
	a3 := run("a", 3)
	second.Stop() // crash again, right after a Job was created

	startOperator(t)
	consistently(t, 2*time.Second, "exactly one Job per run", func() error {
		names := map[string]int{}
		for _, j := range listJobs(t, ns) {
			names[j.Name]++
		}
		if len(names) != 5 {
			return fmt.Errorf("Jobs: %v", names)
		}
		for name, n := range names {
			if n != 1 {
				return fmt.Errorf("%d Jobs named %s", n, name)
			}
		}
		return nil
	})
	finishJob(t, a3, 0, resultReport(aTPS[2], nil))
	finishJob(t, run("b", 3), 0, resultReport(bTPS[2], nil))
	done := waitForPhase(t, ns, "restart", benchv1.PhaseCompleted)

	if done.Status.Progress != "6/6" {
		t.Errorf("progress %q", done.Status.Progress)
	}
	a, b := done.Status.Result("a"), done.Status.Result("b")
	for _, r := range []*benchv1.TransportResult{a, b} {
		var rounds []int32
		for _, run := range r.Runs {
			rounds = append(rounds, run.Round)
			if run.Job != roundJobName("restart", r.Transport, run.Round) {
				t.Errorf("%s round %d ran in Job %s", r.Transport, run.Round, run.Job)
			}
		}
		if fmt.Sprint(rounds) != "[1 2 3]" || r.Repetitions != 3 {
			t.Errorf("%s: rounds %v, repetitions %d", r.Transport, rounds, r.Repetitions)
		}
	}
	if a.TPS != 950 || a.TPSSpread.Min != 900 || a.TPSSpread.Max != 1000 || a.TPSSpread.CV == nil {
		t.Errorf("a: tps %v, spread %+v", a.TPS, a.TPSSpread)
	}
	// b/a per round: 0.778, 0.78, 0.758: all well below 1, so the interval is too.
	if c := b.Comparison; c == nil || c.Pairs != 3 || c.Verdict != benchv1.VerdictSlower || c.Upper == nil || *c.Upper >= 1 ||
		*c.Lower > c.Ratio || c.Ratio > *c.Upper {
		t.Errorf("b's comparison %+v", b.Comparison)
	}
	if best := done.Status.Best; best == nil || !best.Significant || best.Transport != "a" || best.RoundedTPS != 950 ||
		best.Summary != "a" {
		t.Errorf("best %+v", best)
	}
}

// TestSequentialOrder runs every round of a transport before the next one.
func TestSequentialOrder(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	tb := newBenchmark(ns, "seq",
		benchv1.TransportSpec{Name: "a", Type: benchv1.TransportDirect},
		benchv1.TransportSpec{Name: "b", Type: benchv1.TransportDirect})
	tb.Spec.Load.Repetitions, tb.Spec.Load.Order = 2, benchv1.OrderSequential
	if err := testClient.Create(context.Background(), inSpecOrder(tb)); err != nil {
		t.Fatal(err)
	}
	startOperator(t)
	for i, want := range []string{roundJobName("seq", "a", 1), roundJobName("seq", "a", 2),
		roundJobName("seq", "b", 1), roundJobName("seq", "b", 2)} {
		job := waitForJob(t, ns, want)
		if n := len(listJobs(t, ns)); n != i+1 {
			t.Fatalf("%d Jobs exist when %s starts", n, want)
		}
		finishJob(t, job, 0, resultReport([]float64{1000, 1100, 1050, 1000}[i], nil))
	}
	done := waitForPhase(t, ns, "seq", benchv1.PhaseCompleted)
	// Two equal-looking transports: no verdict either way, and a tie at the top.
	if best := done.Status.Best; best == nil || best.Significant || len(best.Ties) != 2 {
		t.Errorf("best %+v", best)
	}
}

// TestMissingSecretWaitsThenFails: a missing Secret is reported at once, resolved when it appears,
// and fails the benchmark when it never does.
func TestMissingSecretWaitsThenFails(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	startOperator(t)
	ctx := context.Background()
	// The clusters are ready; only their Secrets are late.
	createReadyCluster(t, ns, "pg")
	createReadyCluster(t, ns, "other")

	if err := testClient.Create(ctx, newBenchmark(ns, "late-secret")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "ServerResolved=False", func() error {
		tb := getBenchmark(t, ns, "late-secret")
		c := meta.FindStatusCondition(tb.Status.Conditions, conditions.ServerResolved)
		if tb.Status.Phase != benchv1.PhasePending || c == nil || c.Reason != conditions.ReasonSecretNotFound ||
			!strings.Contains(c.Message, "pg-app") {
			return fmt.Errorf("phase %s, condition %+v", tb.Status.Phase, c)
		}
		return nil
	})
	createClusterSecrets(t, ns, "pg")
	waitForJob(t, ns, jobName("late-secret", "direct"))

	// The test operator waits 3s for Secrets; "other-app" never comes.
	never := newBenchmark(ns, "never")
	never.Spec.Server.CNPG.ClusterName = "other"
	if err := testClient.Create(ctx, never); err != nil {
		t.Fatal(err)
	}
	failed := waitForPhase(t, ns, "never", benchv1.PhaseFailed)
	c := assertCondition(t, failed, conditions.Failed, metav1.ConditionTrue, conditions.ReasonSecretNotFound)
	if !strings.Contains(c.Message, "other-app") || !strings.Contains(c.Message, "waited") {
		t.Errorf("message %q", c.Message)
	}
}

// TestStuckPodFailsFast: a runner image that cannot be pulled fails the benchmark with the
// kubelet's reason instead of waiting for the timeout.
func TestStuckPodFailsFast(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()
	if err := testClient.Create(ctx, newBenchmark(ns, "stuck")); err != nil {
		t.Fatal(err)
	}
	job := waitForJob(t, ns, jobName("stuck", "direct"))
	pod := createJobPod(t, job)
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "runner", State: corev1.ContainerState{
		Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "tunnelbench/runner:test"`}}}}
	if err := testClient.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	failed := waitForPhase(t, ns, "stuck", benchv1.PhaseFailed)
	c := assertCondition(t, failed, conditions.Failed, metav1.ConditionTrue, conditions.ReasonJobFailed)
	if !strings.Contains(c.Message, "ImagePullBackOff") {
		t.Errorf("message %q", c.Message)
	}
}

// TestTimeout: a benchmark that outlives spec.timeout fails with reason Timeout, its Job carries the
// same deadline so that pgbench stops too, and the Job is deleted when the benchmark fails.
func TestTimeout(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	tb := newBenchmark(ns, "slow")
	tb.Spec.Timeout = &metav1.Duration{Duration: 10 * time.Second}
	tb.Spec.Load.Duration, tb.Spec.Load.Warmup = &metav1.Duration{Duration: 2 * time.Second}, &metav1.Duration{}
	if err := testClient.Create(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	job := waitForJob(t, ns, jobName("slow", "direct"))
	if d := job.Spec.ActiveDeadlineSeconds; d == nil || *d > 10 || *d < 5 {
		t.Errorf("activeDeadlineSeconds = %v, want the rest of the 10s timeout", d)
	}
	var failed *benchv1.TunnelBenchmark
	eventually(t, 20*time.Second, "timeout", func() error {
		failed = getBenchmark(t, ns, "slow")
		if failed.Status.Phase != benchv1.PhaseFailed {
			return fmt.Errorf("phase %s", failed.Status.Phase)
		}
		return nil
	})
	c := assertCondition(t, failed, conditions.Failed, metav1.ConditionTrue, conditions.ReasonTimeout)
	if !strings.Contains(c.Message, "spec.timeout (10s)") || !strings.Contains(c.Message, "0/1") {
		t.Errorf("message %q", c.Message)
	}
	// The Job still ran: stopped at once, or its pgbench would load the server while the next
	// benchmark of the server measures it.
	eventually(t, 10*time.Second, "the running Job stopped", func() error {
		for _, j := range listJobs(t, ns) {
			if j.Name == job.Name && j.DeletionTimestamp.IsZero() {
				return fmt.Errorf("Job %s still exists", j.Name)
			}
		}
		return nil
	})
}

func assertOwnedBy(t *testing.T, job *batchv1.Job, tb *benchv1.TunnelBenchmark) {
	t.Helper()
	owner := metav1.GetControllerOf(job)
	if owner == nil || owner.Kind != "TunnelBenchmark" || owner.Name != tb.Name ||
		owner.BlockOwnerDeletion == nil || !*owner.BlockOwnerDeletion {
		t.Errorf("Job %s controller = %+v, want the benchmark", job.Name, owner)
	}
}

func assertArgs(t *testing.T, job *batchv1.Job, wantParts ...string) {
	t.Helper()
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	for _, w := range wantParts {
		if !strings.Contains(args, w) {
			t.Errorf("Job %s args %q lack %q", job.Name, args, w)
		}
	}
}

func assertEnv(t *testing.T, job *batchv1.Job, name, want string) {
	t.Helper()
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			if e.Value != want {
				t.Errorf("Job %s env %s = %q, want %q", job.Name, name, e.Value, want)
			}
			return
		}
	}
	t.Errorf("Job %s has no env %s", job.Name, name)
}

func assertCondition(t *testing.T, tb *benchv1.TunnelBenchmark, typ string, status metav1.ConditionStatus,
	reason string) metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(tb.Status.Conditions, typ)
	if c == nil {
		t.Fatalf("no %s condition in %+v", typ, tb.Status.Conditions)
	}
	if c.Status != status || c.Reason != reason {
		t.Errorf("condition %s = %s/%s (%s), want %s/%s", typ, c.Status, c.Reason, c.Message, status, reason)
	}
	return *c
}

func gatherGauges(t *testing.T, op *operator, metric string) []*dto.Metric {
	t.Helper()
	families, err := op.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == metric {
			return f.GetMetric()
		}
	}
	return nil
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// gaugeValue is a transport's series of a metric, waiting for it a little: the operator publishes
// a pass's figures right after it has stored them, which the test may see first.
func gaugeValue(t *testing.T, op *operator, metric, ns, benchmark, transport string) float64 {
	t.Helper()
	var value float64
	eventually(t, 5*time.Second, fmt.Sprintf("a %s series for %s/%s/%s", metric, ns, benchmark, transport), func() error {
		for _, m := range gatherGauges(t, op, metric) {
			l := labelsOf(m)
			if l["namespace"] == ns && l["benchmark"] == benchmark && l["transport"] == transport {
				value = m.GetGauge().GetValue()
				return nil
			}
		}
		return fmt.Errorf("none yet")
	})
	return value
}

func seriesCount(t *testing.T, op *operator, metric, ns, benchmark string) int {
	t.Helper()
	n := 0
	for _, m := range gatherGauges(t, op, metric) {
		if l := labelsOf(m); l["namespace"] == ns && l["benchmark"] == benchmark {
			n++
		}
	}
	return n
}

func phaseGauge(t *testing.T, op *operator, phase benchv1.Phase) float64 {
	t.Helper()
	for _, m := range gatherGauges(t, op, "tunnelbench_benchmarks") {
		if labelsOf(m)["phase"] == string(phase) {
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// TestResultReadBeforeTheDeadline: an operator that was down when the last Job completed, and
// comes back after spec.timeout, records the result instead of a timeout over it; a transport that
// had not started by then is not started any more.
func TestResultReadBeforeTheDeadline(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	ctx := context.Background()
	for _, tt := range []struct {
		name       string
		transports []benchv1.TransportSpec
		phase      benchv1.Phase
	}{
		{"late", []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}, benchv1.PhaseCompleted},
		{"late-two", []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect},
			{Name: "tls", Type: benchv1.TransportTLS}}, benchv1.PhaseFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tb := newBenchmark(ns, tt.name, tt.transports...)
			tb.Spec.Timeout = &metav1.Duration{Duration: 10 * time.Second}
			tb.Spec.Load.Duration, tb.Spec.Load.Warmup = &metav1.Duration{Duration: 2 * time.Second}, &metav1.Duration{}
			if err := testClient.Create(ctx, inSpecOrder(tb)); err != nil {
				t.Fatal(err)
			}
			op := startOperator(t)
			job := waitForJob(t, ns, jobName(tt.name, "direct"))
			// The status write of the pass that created the Job lands before the operator stops.
			waitForPhase(t, ns, tt.name, benchv1.PhaseRunning)
			op.Stop()
			finishJob(t, job, 0, resultReport(1234, nil))
			started := getBenchmark(t, ns, tt.name).Status.StartTime.Time
			time.Sleep(time.Until(started.Add(11 * time.Second)))

			startOperator(t)
			done := waitForPhase(t, ns, tt.name, tt.phase)
			if res := done.Status.Result("direct"); res == nil || res.TPS != 1234 {
				t.Fatalf("the finished run's result was lost: %+v", done.Status.Results)
			}
			if tt.phase == benchv1.PhaseFailed {
				assertCondition(t, done, conditions.Failed, metav1.ConditionTrue, conditions.ReasonTimeout)
				if n := len(listJobsOf(t, ns, tt.name)); n != 1 {
					t.Errorf("%d Jobs: nothing may start after the deadline", n)
				}
			}
		})
	}
}

func listJobsOf(t *testing.T, ns, benchmark string) []batchv1.Job {
	t.Helper()
	var out []batchv1.Job
	for _, j := range listJobs(t, ns) {
		if j.Labels[benchv1.LabelBenchmark] == benchmark {
			out = append(out, j)
		}
	}
	return out
}

// TestUnschedulablePodFailsWithinItsWait: a runner pod no node can take shows in the Progressing
// condition, quoting the scheduler, and fails the benchmark Unschedulable after the bounded wait,
// long before spec.timeout.
func TestUnschedulablePodFailsWithinItsWait(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t, func(r *TunnelBenchmarkReconciler) { r.UnschedulableWait = 4 * time.Second })
	ctx := context.Background()
	if err := testClient.Create(ctx, newBenchmark(ns, "pending")); err != nil {
		t.Fatal(err)
	}
	job := waitForJob(t, ns, jobName("pending", "direct"))
	pod := createJobPod(t, job)
	const scheduler = "0/1 nodes are available: 1 Insufficient cpu."
	pod.Status.Phase = corev1.PodPending
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: scheduler, LastTransitionTime: metav1.Now()}}
	if err := testClient.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the wait for a node reported", func() error {
		tb := getBenchmark(t, ns, "pending")
		if c := meta.FindStatusCondition(tb.Status.Conditions, conditions.Progressing); c == nil ||
			!strings.Contains(c.Message, scheduler) {
			if tb.Status.Phase == benchv1.PhaseFailed {
				return nil // the wait is short; the failure below quotes it too
			}
			return fmt.Errorf("Progressing %+v", c)
		}
		return nil
	})
	failed := waitForPhase(t, ns, "pending", benchv1.PhaseFailed)
	c := assertCondition(t, failed, conditions.Failed, metav1.ConditionTrue, conditions.ReasonUnschedulable)
	if !strings.Contains(c.Message, scheduler) || strings.Contains(c.Message, "spec.timeout") {
		t.Errorf("message %q", c.Message)
	}
}

// TestRefusedPodFailsWithinItsWait: a runner pod the API refuses to create (here a quota; the Job
// controller then only reports FailedCreate events) is quoted in Progressing at once and fails the
// benchmark after the bounded wait, not at spec.timeout.
func TestRefusedPodFailsWithinItsWait(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t, func(r *TunnelBenchmarkReconciler) { r.UnschedulableWait = 4 * time.Second })
	ctx := context.Background()
	if err := testClient.Create(ctx, newBenchmark(ns, "refused")); err != nil {
		t.Fatal(err)
	}
	job := waitForJob(t, ns, jobName("refused", "direct"))
	const refusal = `pods "refused-direct-r1-x" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, ` +
		`used: requests.cpu=2, limited: requests.cpu=2`
	// What the Job controller records while it retries.
	if err := testClient.Create(ctx, &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name + ".failedcreate"},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: ns, Name: job.Name,
			UID: job.UID},
		Reason: "FailedCreate", Message: "Error creating: " + refusal, Type: corev1.EventTypeWarning,
		FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 3,
		Source: corev1.EventSource{Component: "job-controller"},
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the refusal reported", func() error {
		tb := getBenchmark(t, ns, "refused")
		if c := meta.FindStatusCondition(tb.Status.Conditions, conditions.Progressing); c == nil ||
			!strings.Contains(c.Message, refusal) {
			if tb.Status.Phase == benchv1.PhaseFailed {
				return nil
			}
			return fmt.Errorf("Progressing %+v", c)
		}
		return nil
	})
	failed := waitForPhase(t, ns, "refused", benchv1.PhaseFailed)
	c := assertCondition(t, failed, conditions.Failed, metav1.ConditionTrue, conditions.ReasonJobFailed)
	if !strings.Contains(c.Message, refusal) || !strings.Contains(c.Message, "ResourceQuota") {
		t.Errorf("message %q", c.Message)
	}
}

// TestOneBenchmarkPerServer: a second benchmark of the same server waits in Queued, naming the one
// ahead of it, with no Job, and starts when that one ends; one that opts out runs at once and is
// marked unguarded.
func TestOneBenchmarkPerServer(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()
	first := newBenchmark(ns, "first")
	if err := testClient.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	firstJob := waitForJob(t, ns, jobName("first", "direct"))
	second := newBenchmark(ns, "second")
	if err := testClient.Create(ctx, second); err != nil {
		t.Fatal(err)
	}
	queued := waitForPhase(t, ns, "second", benchv1.PhaseQueued)
	c := assertCondition(t, queued, conditions.Queued, metav1.ConditionTrue, "WaitingForServer")
	if !strings.Contains(c.Message, ns+"/first") || queued.Status.StartTime != nil {
		t.Errorf("Queued condition %q, start time %v", c.Message, queued.Status.StartTime)
	}
	unguarded := newBenchmark(ns, "unguarded")
	unguarded.Spec.Exclusive = ptr.To(false)
	if err := testClient.Create(ctx, unguarded); err != nil {
		t.Fatal(err)
	}
	finishJob(t, waitForJob(t, ns, jobName("unguarded", "direct")), 0, resultReport(500, nil))
	if res := waitForPhase(t, ns, "unguarded", benchv1.PhaseCompleted).Status.Result("direct"); res == nil || !res.Unguarded {
		t.Errorf("an unguarded run must say so: %+v", res)
	}
	consistently(t, 2*time.Second, "no Job for the queued benchmark", func() error {
		if n := len(listJobsOf(t, ns, "second")); n != 0 {
			return errorf("%d Jobs", n)
		}
		return nil
	})
	finishJob(t, firstJob, 0, resultReport(1000, nil))
	waitForPhase(t, ns, "first", benchv1.PhaseCompleted)
	finishJob(t, waitForJob(t, ns, jobName("second", "direct")), 0, resultReport(900, nil))
	done := waitForPhase(t, ns, "second", benchv1.PhaseCompleted)
	assertCondition(t, done, conditions.Queued, metav1.ConditionFalse, "Dequeued")
	if res := done.Status.Result("direct"); res == nil || res.Unguarded {
		t.Errorf("result %+v", res)
	}
}

// createJobPod plays the Job controller: the Job's pod, owned by it, with the Job's template.
func createJobPod(t *testing.T, job *batchv1.Job) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name + "-x", Labels: job.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}}},
		Spec: job.Spec.Template.Spec,
	}
	if err := testClient.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// TestProvenance: each result records the runner's node, image (with its digest), resources and
// pgbench's version; for a CloudNativePG server, its primary's node, and a SharedNode warning when
// the runner ran there.
func TestProvenance(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()
	primary := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-1",
			Labels: map[string]string{"cnpg.io/cluster": "pg", "cnpg.io/instanceRole": "primary"}},
		Spec: corev1.PodSpec{NodeName: testNode, Containers: []corev1.Container{{Name: "postgres", Image: "postgres"}}},
	}
	if err := testClient.Create(ctx, primary); err != nil {
		t.Fatal(err)
	}
	if err := testClient.Create(ctx, newBenchmark(ns, "where")); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(report.Report{
		Result:         &engine.Result{TPS: 1000, LatencyAvgMs: 4, Transactions: 10000},
		PgbenchVersion: "pgbench (PostgreSQL) 15.10", Command: "pgbench -T 10",
	})
	if err != nil {
		t.Fatal(err)
	}
	finishJob(t, waitForJob(t, ns, jobName("where", "direct")), 0, string(b))
	done := waitForPhase(t, ns, "where", benchv1.PhaseCompleted)
	p := done.Status.Result("direct").Provenance
	if p == nil || p.Node != testNode || p.ServerNode != testNode || p.SharedNode == nil || !*p.SharedNode ||
		p.RunnerImage != testImageID || p.PgbenchVersion != "pgbench (PostgreSQL) 15.10" || p.CPURequest != "500m" ||
		p.MemoryLimit != "512Mi" {
		t.Errorf("provenance %+v", p)
	}
	c := assertCondition(t, done, conditions.SharedNode, metav1.ConditionTrue, "SameNode")
	if !strings.Contains(c.Message, testNode) {
		t.Errorf("SharedNode %q", c.Message)
	}
	assertEvents(t, ns, "where", "SharedNode")
}

// TestTimeoutAboveTheOperatorsMaximum: a spec.timeout longer than the operator allows (the chart's
// maxTimeout) fails at once, naming both and what to do, and creates nothing.
func TestTimeoutAboveTheOperatorsMaximum(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperatorAs(t, operatorUser, []string{ns}, func(r *TunnelBenchmarkReconciler) { r.MaxTimeout = time.Hour })
	tb := newBenchmark(ns, "too-long")
	tb.Spec.Timeout = &metav1.Duration{Duration: 2 * time.Hour}
	assertRefusedBeforeAnyRun(t, tb, "spec.timeout (2h0m0s)", "maxTimeout")
}

// TestPrivilegedTransportNotAllowed: without the webhook, an operator whose administrator did not
// allow privileged transports fails a benchmark with a pooler over an openvpn path at once (before
// any run, whichever transport comes first), naming the chart value, and creates nothing.
func TestPrivilegedTransportNotAllowed(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	tb := newBenchmark(ns, "privileged")
	tb.Spec.Transports = []benchv1.TransportSpec{
		{Name: "pooled", Type: benchv1.TransportPooler, Pooler: &benchv1.PoolerTransport{
			Placement: benchv1.PoolerSidecar, Over: "ovpn"}},
		{Name: "ovpn", Type: benchv1.TransportVPN, VPN: &benchv1.VPNTransport{Kind: benchv1.VPNOpenVPN}},
	}
	assertRefusedBeforeAnyRun(t, tb, "transports.allowPrivileged", "NET_ADMIN")
}

// TestRunnerImageOffTheList: without the webhook (disabled, or failurePolicy Ignore while the
// operator was down), a runner image the administrator did not allow never receives the
// password: the benchmark fails at once, naming spec.runner.image and the chart value, and
// nothing is created.
func TestRunnerImageOffTheList(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t, func(r *TunnelBenchmarkReconciler) {
		r.Policy = admission.Policy{DefaultRunnerImage: r.Defaults.Image, RunnerImages: []string{"registry.corp/tb/*"}}
	})
	tb := newBenchmark(ns, "steal")
	tb.Spec.Runner = &benchv1.RunnerSpec{Image: "evil.example/steal:1"}
	assertRefusedBeforeAnyRun(t, tb, "spec.runner.image", "runner.allowedImages")
}

// TestTransportRulesBeforeAnyRun: a spec the CRD admits but its transports cannot run (their rules
// are checked in Go, at admission by the webhook and here again: a WireGuard tunnel from two
// runner pods would share one client key) fails at once as InvalidSpec when no webhook refused it,
// naming the field, and nothing is created.
func TestTransportRulesBeforeAnyRun(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	tb := newBenchmark(ns, "shared-key", benchv1.TransportSpec{Name: "wg", Type: benchv1.TransportVPN})
	tb.Spec.Runner = &benchv1.RunnerSpec{Pods: 2}
	assertRefusedBeforeAnyRun(t, tb, "spec.runner.pods", "a WireGuard transport runs from one runner pod yet")
}

// TestProvenanceOfAServiceServer: an external server that is a Service of the cluster is seen as
// its running pod: its node is the server's node, and a runner on it shares it.
func TestProvenanceOfAServiceServer(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createExternalSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()
	selector := map[string]string{"app": "db"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Port: 5432}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-0", Labels: selector},
		Spec: corev1.PodSpec{NodeName: testNode, Containers: []corev1.Container{{Name: "postgres", Image: "postgres"}}}}
	if err := testClient.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if err := testClient.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	if err := testClient.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	tb := newBenchmark(ns, "beside")
	useExternalServer(tb)
	tb.Spec.Server.External.Host = "db." + ns + ".svc"
	if err := testClient.Create(ctx, tb); err != nil {
		t.Fatal(err)
	}
	finishJob(t, waitForJob(t, ns, jobName(tb.Name, "direct")), 0, resultReport(1000, nil))
	done := waitForPhase(t, ns, tb.Name, benchv1.PhaseCompleted)
	if p := done.Status.Result("direct").Provenance; p == nil || p.ServerNode != testNode || p.SharedNode == nil || !*p.SharedNode {
		t.Errorf("provenance %+v", p)
	}
	assertCondition(t, done, conditions.SharedNode, metav1.ConditionTrue, "SameNode")
}

// assertRefusedBeforeAnyRun creates tb and checks that the operator fails it at once as
// InvalidSpec, its message saying each of want, with no Job created.
func assertRefusedBeforeAnyRun(t *testing.T, tb *benchv1.TunnelBenchmark, want ...string) {
	t.Helper()
	if err := testClient.Create(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	failed := waitForPhase(t, tb.Namespace, tb.Name, benchv1.PhaseFailed)
	c := assertCondition(t, failed, conditions.Failed, metav1.ConditionTrue, conditions.ReasonInvalidSpec)
	for _, w := range want {
		if !strings.Contains(c.Message, w) {
			t.Errorf("message %q does not say %q", c.Message, w)
		}
	}
	if jobs := listJobs(t, tb.Namespace); len(jobs) != 0 {
		t.Errorf("%d Jobs created for a benchmark refused", len(jobs))
	}
}
