package schedule_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	historycontroller "github.com/tunnelbench/tunnelbench/controllers/history"
	"github.com/tunnelbench/tunnelbench/controllers/schedule"
	"github.com/tunnelbench/tunnelbench/internal/analysis/benchsim"
	"github.com/tunnelbench/tunnelbench/internal/history"
	"github.com/tunnelbench/tunnelbench/internal/operator/admission"
	"github.com/tunnelbench/tunnelbench/internal/operator/metrics"
	"github.com/tunnelbench/tunnelbench/internal/operator/runseal"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

// clock is a schedule's clock that a test moves on.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// startAt moves the clock to the schedule's creation, which the API server stamps with its own
// time: a schedule's first run is the first minute after that, so a clock left a little before it
// (a test starting at 08:16:59.9, the schedule created at 08:17:00) would make nextMinute land on
// 08:17:02, before any run is due.
func (c *clock) startAt(stb *benchv1.ScheduledTunnelBenchmark) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if created := stb.CreationTimestamp.Time; created.After(c.now) {
		c.now = created
	}
}

// nextMinute sets the clock to the next minute after its time, plus 2 s: the next run of "* * * * *".
func (c *clock) nextMinute() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Truncate(time.Minute).Add(time.Minute + 2*time.Second)
	return c.now
}

// testSeal is the tests' run seal key (the operator's is a Secret's random bytes).
var testSeal = runseal.Key("0123456789abcdef0123456789abcdef")

// scheduler is an operator with the schedules' controller alone (and the history recorder with a
// store): the benchmarks it creates never run, the tests end them by writing their status.
type scheduler struct {
	stop     context.CancelFunc
	done     chan error
	reg      *prometheus.Registry
	metrics  *metrics.ScheduleRecorder
	stopOnce sync.Once
}

func startScheduler(t *testing.T, c *clock, store *history.Store) *scheduler {
	t.Helper()
	return startSchedulerAsking(t, c, store, false)
}

// startSchedulerAsking is startScheduler whose controller, with ask, asks the API server (as the
// operator) whether a schedule's author may run it, as with the webhook on.
func startSchedulerAsking(t *testing.T, c *clock, store *history.Store, ask bool) *scheduler {
	t.Helper()
	needsEnvtest(t)
	mgr, err := ctrl.NewManager(configAs(operatorUser), ctrl.Options{Scheme: testScheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &scheduler{done: make(chan error, 1), reg: prometheus.NewRegistry()}
	s.metrics = metrics.NewScheduleRecorder(s.reg)
	opts := controller.Options{SkipNameValidation: ptr.To(true)}
	var access *admission.Validator
	if ask {
		access = &admission.Validator{Client: mgr.GetClient()}
	}
	if err := (&schedule.ScheduledTunnelBenchmarkReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("tunnelbench-schedule"),
		Metrics: s.metrics, History: store, Now: c.Now, Access: access, Seal: testSeal}).SetupWithManager(mgr, opts); err != nil {
		t.Fatal(err)
	}
	if store != nil {
		recorder := &historycontroller.Reconciler{Client: mgr.GetClient(), Store: store, Seal: testSeal}
		if err := recorder.SetupWithManager(mgr, opts); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	go func() { s.done <- mgr.Start(ctx) }()
	t.Cleanup(s.Stop)
	return s
}

func (s *scheduler) Stop() { s.stopOnce.Do(func() { s.stop(); <-s.done }) }

// newSchedule is a schedule of every minute of a benchmark of direct, tls and ssh.
func newSchedule(ns, name string) *benchv1.ScheduledTunnelBenchmark {
	tb := newBenchmark(ns, "template",
		benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect},
		benchv1.TransportSpec{Name: "tls", Type: benchv1.TransportTLS},
		benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH})
	tb.Spec.Load.Repetitions = 3
	return &benchv1.ScheduledTunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: benchv1.ScheduledTunnelBenchmarkSpec{Schedule: "* * * * *",
			BenchmarkTemplate: benchv1.TunnelBenchmarkTemplate{Metadata: benchv1.TemplateMetadata{Labels: map[string]string{"team": "db"}},
				Spec: tb.Spec}}}
}

// poke makes the controller look at the schedule again (an annotation changes).
func poke(t *testing.T, stb *benchv1.ScheduledTunnelBenchmark) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test/poke":%q}}}`, time.Now().Format(time.RFC3339Nano))
	if err := testClient.Patch(context.Background(), stb, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func scheduleBenchmarks(t *testing.T, stb *benchv1.ScheduledTunnelBenchmark) []benchv1.TunnelBenchmark {
	t.Helper()
	list := &benchv1.TunnelBenchmarkList{}
	if err := testClient.List(context.Background(), list, client.InNamespace(stb.Namespace),
		client.MatchingLabels{benchv1.LabelSchedule: stb.Name}); err != nil {
		t.Fatal(err)
	}
	var out []benchv1.TunnelBenchmark
	for _, tb := range list.Items {
		if tb.DeletionTimestamp == nil {
			out = append(out, tb)
		}
	}
	return out
}

// waitForBenchmarks waits until the schedule's benchmarks are those named.
func waitForBenchmarks(t *testing.T, stb *benchv1.ScheduledTunnelBenchmark, names ...string) []benchv1.TunnelBenchmark {
	t.Helper()
	var got []benchv1.TunnelBenchmark
	poll.Until(t, 15*time.Second, 100*time.Millisecond, fmt.Sprintf("the benchmarks %v", names), func() error {
		got = scheduleBenchmarks(t, stb)
		var have []string
		for _, tb := range got {
			have = append(have, tb.Name)
		}
		if strings.Join(have, ",") != strings.Join(names, ",") {
			return fmt.Errorf("have %v", have)
		}
		return nil
	})
	return got
}

// complete writes a completed status with rounds of tps for direct, tls and ssh (ssh scaled by
// sshScale), or a failed one.
func complete(t *testing.T, ns, name string, at time.Time, sshScale float64, failed bool) {
	t.Helper()
	poll.Until(t, 10*time.Second, 100*time.Millisecond, "the status of "+name, func() error {
		tb := &benchv1.TunnelBenchmark{}
		if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, tb); err != nil {
			return err
		}
		done := benchsim.Completed(name, []float64{1000, 1010, 990}, []float64{800, 795, 805},
			[]float64{500 * sshScale, 505 * sshScale, 495 * sshScale})
		tb.Status = done.Status
		tb.Status.CompletionTime = &metav1.Time{Time: at}
		if failed {
			tb.Status.Phase, tb.Status.Results = benchv1.PhaseFailed, nil
		}
		return testClient.Status().Update(context.Background(), tb)
	})
}

func getSchedule(t *testing.T, stb *benchv1.ScheduledTunnelBenchmark) *benchv1.ScheduledTunnelBenchmark {
	t.Helper()
	cur := &benchv1.ScheduledTunnelBenchmark{}
	if err := testClient.Get(context.Background(), client.ObjectKeyFromObject(stb), cur); err != nil {
		t.Fatal(err)
	}
	return cur
}

func runName(stb *benchv1.ScheduledTunnelBenchmark, due time.Time) string {
	return fmt.Sprintf("%s-%d", stb.Name, due.Truncate(time.Minute).Unix()/60)
}

// TestScheduleCreatesForbidsAndKeepsTheLast: each minute creates the template's benchmark, owned
// and labelled; a run due while one runs is skipped (Forbid); completed ones beyond the limit go
// once judged, and a failed one is kept up to its own limit.
func TestScheduleCreatesForbidsAndKeepsTheLast(t *testing.T) {
	ns := newNamespace(t)
	c := &clock{now: time.Now()}
	startScheduler(t, c, nil)
	stb := newSchedule(ns, "nightly")
	stb.Spec.SuccessfulBenchmarksHistoryLimit = ptr.To[int32](2)
	stb.Spec.FailedBenchmarksHistoryLimit = ptr.To[int32](1)
	if err := testClient.Create(context.Background(), stb); err != nil {
		t.Fatal(err)
	}
	c.startAt(stb)
	first := c.nextMinute()
	poke(t, stb)
	tbs := waitForBenchmarks(t, stb, runName(stb, first))
	tb := tbs[0]
	if ref := metav1.GetControllerOf(&tb); ref == nil || ref.UID != stb.UID || tb.Labels["team"] != "db" ||
		tb.Labels[benchv1.LabelTemplateHash] != getSchedule(t, stb).TemplateHash() || len(tb.Spec.Transports) != 3 {
		t.Fatalf("the benchmark created: owner %v, labels %v, %d transports", ref, tb.Labels, len(tb.Spec.Transports))
	}
	// Due again while the first runs: skipped.
	c.nextMinute()
	poke(t, stb)
	poll.Until(t, 10*time.Second, 100*time.Millisecond, "a skipped run", func() error {
		if s := getSchedule(t, stb).Status.Skipped; s != 1 {
			return fmt.Errorf("skipped %d", s)
		}
		return nil
	})
	assertEvents(t, ns, stb.Name, conditions.ReasonBenchmarkCreated, conditions.ReasonRunSkipped)
	var names []string
	names = append(names, tb.Name)
	complete(t, ns, tb.Name, c.Now(), 1, false)
	// Four more runs: the third fails; of the completed ones, the newest two stay.
	for i := range 4 {
		due := c.nextMinute()
		poke(t, stb)
		name := runName(stb, due)
		poll.Until(t, 10*time.Second, 100*time.Millisecond, name, func() error {
			return testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &benchv1.TunnelBenchmark{})
		})
		complete(t, ns, name, c.Now(), 1, i == 2)
		names = append(names, name)
	}
	poke(t, stb)
	// names: c1 c2 c3 f4 c5: keep c3 and c5 (two completed), f4 (one failed).
	waitForBenchmarks(t, stb, names[2], names[3], names[4])
	poll.Until(t, 10*time.Second, 100*time.Millisecond, "the status to list the three kept", func() error {
		if st := getSchedule(t, stb).Status; len(st.Benchmarks) != 3 || st.LastSuccessfulTime == nil || st.NextScheduleTime == nil {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
}

// TestScheduleRunsOnlyWhatItsAuthorMay: before each run the controller asks the API server whether
// the schedule's recorded author may do what the run does; one who may not gets no run, and the
// condition and an event name the access; the right given, the next run is created.
func TestScheduleRunsOnlyWhatItsAuthorMay(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	// The operator's right to ask, which the chart grants with the webhook.
	mustCreateAll(t, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "ask-" + ns}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ask-" + ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "ask-" + ns},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: operatorUser}}})
	c := &clock{now: time.Now()}
	startSchedulerAsking(t, c, nil, true)
	stb := newSchedule(ns, "erins")
	// No webhook here: the author is written as the webhook writes it.
	stb.Annotations = map[string]string{benchv1.AnnotationAuthor: `{"username":"erin","groups":["system:authenticated"]}`}
	if err := testClient.Create(ctx, stb); err != nil {
		t.Fatal(err)
	}
	c.startAt(stb)
	refused := c.nextMinute()
	poke(t, stb)
	poll.Until(t, 15*time.Second, 100*time.Millisecond, "the run refused", func() error {
		cond := meta.FindStatusCondition(getSchedule(t, stb).Status.Conditions, conditions.Authorized)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != conditions.ReasonAuthorLacksAccess {
			return fmt.Errorf("condition %+v", cond)
		}
		if !strings.Contains(cond.Message, `user "erin" may not "create" on tunnelbenchmarks.bench.tunnelbench.io in namespace `+ns) {
			t.Fatalf("the condition does not name the access: %s", cond.Message)
		}
		return nil
	})
	if tbs := scheduleBenchmarks(t, stb); len(tbs) != 0 || getSchedule(t, stb).Status.LastScheduleTime == nil {
		t.Fatalf("the run due at %s: %d benchmarks, or not passed", refused, len(tbs))
	}
	assertEvents(t, ns, stb.Name, conditions.ReasonAuthorLacksAccess)
	mustCreateAll(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "everything"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "erin"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "everything"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "erin"}}})
	var due time.Time
	poll.Until(t, 30*time.Second, 100*time.Millisecond, "a run once erin may", func() error {
		due = c.nextMinute()
		poke(t, stb)
		time.Sleep(300 * time.Millisecond)
		if len(scheduleBenchmarks(t, stb)) == 0 {
			return fmt.Errorf("no run yet")
		}
		return nil
	})
	waitForBenchmarks(t, stb, runName(stb, due))
	if cond := meta.FindStatusCondition(getSchedule(t, stb).Status.Conditions, conditions.Authorized); cond == nil ||
		cond.Status != metav1.ConditionTrue || cond.Reason != conditions.ReasonAuthorMayRun {
		t.Errorf("condition %+v", cond)
	}
}

// mustCreateAll creates objs as the envtest's administrator, and deletes them when the test ends.
func mustCreateAll(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := testClient.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = testClient.Delete(context.Background(), o) })
	}
}

// TestSuspendAndReplace: a suspended schedule starts nothing and says so; Replace cancels the
// running benchmark and starts the new one.
func TestSuspendAndReplace(t *testing.T) {
	ns := newNamespace(t)
	c := &clock{now: time.Now()}
	startScheduler(t, c, nil)
	stb := newSchedule(ns, "paused")
	stb.Spec.Suspend = ptr.To(true)
	stb.Spec.ConcurrencyPolicy = benchv1.ConcurrencyReplace
	if err := testClient.Create(context.Background(), stb); err != nil {
		t.Fatal(err)
	}
	c.startAt(stb)
	c.nextMinute()
	poke(t, stb)
	poll.Until(t, 10*time.Second, 100*time.Millisecond, "Ready False, Suspended", func() error {
		cur := getSchedule(t, stb)
		c := meta.FindStatusCondition(cur.Status.Conditions, conditions.Ready)
		if c == nil || c.Reason != conditions.ReasonSuspended || cur.Status.Skipped != 1 {
			return fmt.Errorf("%+v", cur.Status)
		}
		return nil
	})
	if tbs := scheduleBenchmarks(t, stb); len(tbs) != 0 {
		t.Fatalf("a suspended schedule created %d benchmarks", len(tbs))
	}
	cur := getSchedule(t, stb)
	cur.Spec.Suspend = ptr.To(false)
	if err := testClient.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	first := c.nextMinute()
	poke(t, stb)
	waitForBenchmarks(t, stb, runName(stb, first))
	second := c.nextMinute()
	poke(t, stb)
	waitForBenchmarks(t, stb, runName(stb, first), runName(stb, second))
	old := &benchv1.TunnelBenchmark{}
	err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: runName(stb, first)}, old)
	if err != nil || !old.Spec.Cancel {
		t.Fatalf("the replaced benchmark: cancel %v, %v", old.Spec.Cancel, err)
	}
}

// TestRegressionAgainstTheKeptBenchmarks: without a store, the kept benchmarks are the history;
// the fourth, whose ssh is half as fast, raises Regressed for ssh alone, on itself and on the
// schedule, with an event and a metric.
func TestRegressionAgainstTheKeptBenchmarks(t *testing.T) {
	ns := newNamespace(t)
	c := &clock{now: time.Now()}
	s := startScheduler(t, c, nil)
	stb := newSchedule(ns, "watched")
	stb.Spec.SuccessfulBenchmarksHistoryLimit = ptr.To[int32](10)
	if err := testClient.Create(context.Background(), stb); err != nil {
		t.Fatal(err)
	}
	c.startAt(stb)
	var last string
	for i, scale := range []float64{1, 1.01, 0.99, 0.5} {
		due := c.nextMinute()
		poke(t, stb)
		last = runName(stb, due)
		waitForBenchmarks(t, stb, append(namesOf(scheduleBenchmarks(t, stb), last), last)...)
		complete(t, ns, last, c.Now(), scale, false)
		want := map[int]metav1.ConditionStatus{0: metav1.ConditionUnknown, 1: metav1.ConditionUnknown,
			2: metav1.ConditionUnknown, 3: metav1.ConditionTrue}[i]
		waitForRegressed(t, ns, last, want)
	}
	tb := &benchv1.TunnelBenchmark{}
	if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: last}, tb); err != nil {
		t.Fatal(err)
	}
	for _, j := range tb.Status.Regression {
		if j.Regressed != (j.Transport == "ssh") || j.Before == nil {
			t.Errorf("%s %s: regressed %v, before %+v (%s)", j.Transport, j.Figure, j.Regressed, j.Before, j.Reason)
		}
	}
	poll.Until(t, 10*time.Second, 100*time.Millisecond, "the schedule's Regressed condition and metric", func() error {
		cur := getSchedule(t, stb)
		c := meta.FindStatusCondition(cur.Status.Conditions, conditions.Regressed)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "ssh: ratio") {
			return fmt.Errorf("condition %+v", c)
		}
		if g, ok := s.regressed(t, ns, stb.Name, "ssh", "ratio"); !ok || g != 1 {
			return fmt.Errorf("tunnelbench_schedule_regressed for ssh's ratio: %v (%v)", g, ok)
		}
		if g, ok := s.regressed(t, ns, stb.Name, "tls", "ratio"); !ok || g != 0 {
			return fmt.Errorf("tunnelbench_schedule_regressed for tls's ratio: %v (%v)", g, ok)
		}
		return nil
	})
	assertEvents(t, ns, last, conditions.ReasonRegressed)
	assertEvents(t, ns, stb.Name, conditions.ReasonRegressed)
}

// regressed is the schedule's tunnelbench_schedule_regressed series of a transport's figure.
func (s *scheduler) regressed(t *testing.T, ns, schedule, transport, figure string) (float64, bool) {
	t.Helper()
	families, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "tunnelbench_schedule_regressed" {
			continue
		}
		want := map[string]string{"namespace": ns, "schedule": schedule, "transport": transport, "figure": figure}
		for _, m := range f.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched == len(want) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

func namesOf(tbs []benchv1.TunnelBenchmark, except string) []string {
	var out []string
	for _, tb := range tbs {
		if tb.Name != except {
			out = append(out, tb.Name)
		}
	}
	return out
}

func waitForRegressed(t *testing.T, ns, name string, want metav1.ConditionStatus) {
	t.Helper()
	poll.Until(t, 10*time.Second, 100*time.Millisecond, name+" judged "+string(want), func() error {
		tb := &benchv1.TunnelBenchmark{}
		if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, tb); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(tb.Status.Conditions, conditions.Regressed); c == nil || c.Status != want {
			return fmt.Errorf("Regressed %+v", c)
		}
		return nil
	})
}

// TestHistoryWrittenOnce: with a real PostgreSQL as the store, each completed benchmark is
// recorded once, across an operator restart and a write another operator made first; a store
// that is down is retried, the benchmark saying so, until it is back.
func TestHistoryWrittenOnce(t *testing.T) {
	needsEnvtest(t)
	pg, err := pgtest.StartTemp(pgtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop)
	store, err := history.Open(pg.ConnString("require"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ns := newNamespace(t)
	c := &clock{now: time.Now()}
	s := startScheduler(t, c, store)
	stb := newSchedule(ns, "recorded")
	if err := testClient.Create(context.Background(), stb); err != nil {
		t.Fatal(err)
	}
	c.startAt(stb)
	first := waitForRecorded(t, ns, nextScheduledRun(t, c, stb, ns), true)
	// Another operator recorded the second first (a conflict on its status write): the write
	// finds it there and changes nothing.
	s.Stop()
	due := c.nextMinute()
	s = startScheduler(t, c, store)
	poke(t, stb)
	name := runName(stb, due)
	poll.Until(t, 10*time.Second, 100*time.Millisecond, name, func() error {
		return testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &benchv1.TunnelBenchmark{})
	})
	s.Stop()
	complete(t, ns, name, c.Now(), 1, false)
	second := &benchv1.TunnelBenchmark{}
	if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, second); err != nil {
		t.Fatal(err)
	}
	rec := history.RecordOf(second, stb.Name, second.Labels[benchv1.LabelTemplateHash])
	if wrote, err := store.Write(context.Background(), rec); err != nil || !wrote {
		t.Fatalf("the other operator's write: %v, %v", wrote, err)
	}
	startScheduler(t, c, store)
	waitForRecorded(t, ns, name, true)
	// The store down: the next benchmark says it is not recorded, and is once the store is back.
	pg.Down()
	third := nextScheduledRun(t, c, stb, ns)
	if h := waitForRecorded(t, ns, third, false).Status.History; !strings.Contains(h.Message, "unreachable") ||
		strings.Contains(h.Message, pg.Password) {
		t.Errorf("history while the store is down: %+v", h)
	}
	if err := pg.Up(); err != nil {
		t.Fatal(err)
	}
	waitForRecorded(t, ns, third, true)
	for _, name := range []string{first.Name, name, third} {
		tb := &benchv1.TunnelBenchmark{}
		if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, tb); err != nil {
			t.Fatal(err)
		}
		if ok, err := store.Recorded(context.Background(), string(tb.UID)); !ok || err != nil {
			t.Errorf("%s not in the store: %v", name, err)
		}
	}
	// A benchmark made by a user, labelled and owned as the schedule's run but not sealed: recorded
	// as a benchmark of no schedule, and never one of the schedule's.
	forged := newBenchmark(ns, "forged")
	cur := getSchedule(t, stb)
	forged.Labels = map[string]string{benchv1.LabelSchedule: stb.Name, benchv1.LabelTemplateHash: cur.Status.TemplateHash}
	forged.Annotations = map[string]string{benchv1.AnnotationRunSeal: strings.Repeat("ab", 32)}
	forged.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cur, benchv1.GroupVersion.WithKind("ScheduledTunnelBenchmark"))}
	if err := testClient.Create(context.Background(), forged); err != nil {
		t.Fatal(err)
	}
	complete(t, ns, forged.Name, c.Now(), 0.1, false)
	forged = waitForRecorded(t, ns, forged.Name, true)
	points, err := store.Series(context.Background(), history.SeriesKey{Namespace: ns, Schedule: stb.Name,
		TemplateHash: cur.Status.TemplateHash}, 10)
	if err != nil || len(points) != 3*5 {
		t.Errorf("%d points in the series (%v), want 3 benchmarks × 5 figures, once each", len(points), err)
	}
	for _, p := range points {
		if p.UID == string(forged.UID) {
			t.Fatal("the forged run is in the schedule's series")
		}
	}
	poke(t, stb)
	time.Sleep(time.Second)
	stored := &benchv1.TunnelBenchmark{}
	if err := testClient.Get(context.Background(), client.ObjectKeyFromObject(forged), stored); err != nil {
		t.Fatal(err)
	}
	if schedule.Judged(stored) || slices.ContainsFunc(getSchedule(t, stb).Status.Benchmarks,
		func(b benchv1.ScheduledBenchmark) bool { return b.Name == forged.Name }) {
		t.Error("the forged run was judged, or listed as the schedule's")
	}
}

// nextScheduledRun starts the schedule's next run and completes it, without waiting for its record.
func nextScheduledRun(t *testing.T, c *clock, stb *benchv1.ScheduledTunnelBenchmark, ns string) string {
	t.Helper()
	due := c.nextMinute()
	poke(t, stb)
	name := runName(stb, due)
	poll.Until(t, 10*time.Second, 100*time.Millisecond, name, func() error {
		return testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &benchv1.TunnelBenchmark{})
	})
	complete(t, ns, name, c.Now(), 1, false)
	return name
}

func waitForRecorded(t *testing.T, ns, name string, recorded bool) *benchv1.TunnelBenchmark {
	t.Helper()
	tb := &benchv1.TunnelBenchmark{}
	poll.Until(t, 30*time.Second, 200*time.Millisecond, fmt.Sprintf("%s recorded %v", name, recorded), func() error {
		if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, tb); err != nil {
			return err
		}
		if h := tb.Status.History; h == nil || h.Recorded != recorded {
			return fmt.Errorf("history %+v", h)
		}
		return nil
	})
	return tb
}
