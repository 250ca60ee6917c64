package schedule

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/benchsim"
	"github.com/tunnelbench/tunnelbench/internal/analysis/regress"
)

var planT0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// ended is a benchmark of schedule "s" due at minute m, in phase, judged and recorded as told.
func ended(m int, phase benchv1.Phase, isJudged, recorded bool) benchv1.TunnelBenchmark {
	due := planT0.Add(time.Duration(m) * time.Minute)
	tb := benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "s-" + due.Format("1504"),
		Annotations: map[string]string{benchv1.AnnotationScheduledAt: due.Format(time.RFC3339)}}}
	tb.Status.Phase = phase
	tb.Status.CompletionTime = &metav1.Time{Time: due.Add(30 * time.Second)}
	if isJudged {
		tb.Status.Conditions = []metav1.Condition{{Type: conditions.Regressed, Status: metav1.ConditionFalse}}
	}
	tb.Status.History = &benchv1.HistoryRecord{Recorded: recorded}
	return tb
}

func TestPlanSchedule(t *testing.T) {
	stb := &benchv1.ScheduledTunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "s", UID: "u",
		CreationTimestamp: metav1.Time{Time: planT0}},
		Spec: benchv1.ScheduledTunnelBenchmarkSpec{Schedule: "*/10 * * * *", SuccessfulBenchmarksHistoryLimit: ptr.To[int32](1),
			FailedBenchmarksHistoryLimit: ptr.To[int32](0)}}
	stb.Status.LastScheduleTime = &metav1.Time{Time: planT0.Add(30 * time.Minute)}
	tests := []struct {
		name       string
		now        time.Time
		benchmarks []benchv1.TunnelBenchmark
		store      bool
		create     string
		deleted    []string
		ready      string
	}{
		{"the run due starts", planT0.Add(40*time.Minute + time.Second), nil, false, "s-29929600", nil, conditions.ReasonScheduled},
		{"nothing due", planT0.Add(35 * time.Minute), nil, false, "", nil, conditions.ReasonScheduled},
		{"beyond the limits, once judged", planT0.Add(35 * time.Minute),
			[]benchv1.TunnelBenchmark{ended(0, benchv1.PhaseCompleted, true, false), ended(10, benchv1.PhaseCompleted, true, false),
				ended(20, benchv1.PhaseFailed, false, false), ended(30, benchv1.PhaseCompleted, false, false)},
			false, "", []string{"s-1000", "s-1020"}, conditions.ReasonScheduled},
		{"with a store, once recorded", planT0.Add(35 * time.Minute),
			[]benchv1.TunnelBenchmark{ended(0, benchv1.PhaseCompleted, true, false), ended(10, benchv1.PhaseCompleted, true, true),
				ended(20, benchv1.PhaseCompleted, true, true)},
			true, "", []string{"s-1010"}, conditions.ReasonScheduled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := planSchedule(scheduleView{stb: stb, benchmarks: tc.benchmarks, now: tc.now, store: tc.store})
			created := ""
			if p.create != nil {
				created = p.create.Name
				if p.create.Labels[benchv1.LabelSchedule] != "s" || metav1.GetControllerOf(p.create).UID != types.UID("u") {
					t.Errorf("created %+v", p.create.ObjectMeta)
				}
			}
			c := meta.FindStatusCondition(p.status.Conditions, conditions.Ready)
			if created != tc.create || strings.Join(p.delete, ",") != strings.Join(tc.deleted, ",") || c == nil || c.Reason != tc.ready {
				t.Errorf("created %q, deleted %v, ready %+v", created, p.delete, c)
			}
			want := len(tc.benchmarks) - len(tc.deleted)
			if created != "" {
				want++
			}
			if len(p.status.Benchmarks) != want {
				t.Errorf("status lists %d benchmarks, want %d", len(p.status.Benchmarks), want)
			}
		})
	}
	invalid := stb.DeepCopy()
	invalid.Spec.Schedule = "every day"
	p := planSchedule(scheduleView{stb: invalid, now: planT0})
	c := meta.FindStatusCondition(p.status.Conditions, conditions.Ready)
	if p.create != nil || c == nil || c.Reason != conditions.ReasonInvalidSchedule {
		t.Errorf("an invalid schedule: %+v", c)
	}
}

// TestPlanScheduleAsksTheAuthor: a run due is created only when its author, asked then, holds
// every access it needs; otherwise it is missed, and the condition and a warning say why.
func TestPlanScheduleAsksTheAuthor(t *testing.T) {
	stb := &benchv1.ScheduledTunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "s", UID: "u",
		CreationTimestamp: metav1.Time{Time: planT0}}, Spec: benchv1.ScheduledTunnelBenchmarkSpec{Schedule: "*/10 * * * *"}}
	due := planT0.Add(10*time.Minute + time.Second)
	tests := []struct {
		name       string
		author     authorView
		created    bool
		authorized metav1.ConditionStatus
		reason     string
		said       string
	}{
		{"no webhook: nothing asked", authorView{}, true, "", "", ""},
		{"the author may", authorView{checked: true, name: "alice"}, true, metav1.ConditionTrue, conditions.ReasonAuthorMayRun,
			`its author "alice" held every access`},
		{"the author lost an access", authorView{checked: true, name: "alice",
			refusals: []string{`spec.benchmarkTemplate.spec.server.external.credentialsSecret: Forbidden: user "alice" may not "get"`}},
			false, metav1.ConditionFalse, conditions.ReasonAuthorLacksAccess, `"alice" lacks access: spec.benchmarkTemplate.spec.server`},
		{"no author recorded", authorView{checked: true, refusals: []string{"the schedule records no author"}},
			false, metav1.ConditionFalse, conditions.ReasonNoAuthor, "was not created: the schedule records no author"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := planSchedule(scheduleView{stb: stb, now: due, author: tc.author})
			if (p.create != nil) != tc.created || p.status.LastScheduleTime == nil {
				t.Fatalf("created %v, last scheduled %v; want created %v, the due time passed", p.create != nil,
					p.status.LastScheduleTime, tc.created)
			}
			c := meta.FindStatusCondition(p.status.Conditions, conditions.Authorized)
			if tc.authorized == "" {
				if c != nil {
					t.Errorf("nothing asked, yet %+v", c)
				}
				return
			}
			if c == nil || c.Status != tc.authorized || c.Reason != tc.reason || !strings.Contains(c.Message, tc.said) {
				t.Fatalf("condition %+v, want %s %s saying %q", c, tc.authorized, tc.reason, tc.said)
			}
			warned := slices.ContainsFunc(p.events, func(e scheduleEvent) bool { return e.warning && e.reason == tc.reason })
			if warned == tc.created || len(p.status.Benchmarks) != map[bool]int{true: 1, false: 0}[tc.created] {
				t.Errorf("events %+v, benchmarks %+v", p.events, p.status.Benchmarks)
			}
		})
	}
}

func TestJudgeAndItsCondition(t *testing.T) {
	var earlier []benchv1.TunnelBenchmark
	for i, tls := range []float64{800, 810, 790, 805} {
		tb := benchsim.Completed("b", []float64{1000, 1010, 990}, []float64{tls, tls + 5, tls - 5})
		tb.UID = types.UID(rune('a' + i))
		tb.Labels = map[string]string{benchv1.LabelTemplateHash: "h"}
		tb.Status.CompletionTime = &metav1.Time{Time: planT0.Add(time.Duration(i) * time.Hour)}
		earlier = append(earlier, *tb)
	}
	latest := benchsim.Completed("new", []float64{1000, 1010, 990}, []float64{400, 405, 395})
	latest.UID, latest.Labels = "z", map[string]string{benchv1.LabelTemplateHash: "h"}
	latest.Status.CompletionTime = &metav1.Time{Time: planT0.Add(10 * time.Hour)}
	// The second earlier one was found regressed: it leaves the reference.
	earlier[1].Status.Regression = []benchv1.TransportJudgement{{Transport: "tls", Figure: "ratio", Regressed: true}}
	ref := referenceFromBenchmarks(append(earlier, *latest), latest)
	if n := len(ref[seriesKey{"tls", regress.FigureRatio}]); n != 4 {
		t.Fatalf("%d earlier tls ratios, want 4", n)
	}
	js := judge(latest, ref, regress.Rule{Window: 10, MinEffect: 0.1})
	for _, j := range js {
		// tls's ratio has three earlier results, its tps four: the mark is the ratio's.
		results := map[string]int32{"ratio": 3, "tps": 4}[j.Figure]
		if want := j.Transport == "tls"; j.Regressed != want || j.Before == nil || j.Before.Results != results {
			t.Errorf("%s %s: regressed %v, before %+v", j.Transport, j.Figure, j.Regressed, j.Before)
		}
	}
	c := regressedCondition(js, 1)
	if c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "tls: ratio 0.4") || strings.Contains(c.Message, "direct:") {
		t.Errorf("condition %+v", c)
	}
	// Without the regressed tls, the condition says none regressed and what the bands could not see.
	var within []benchv1.TransportJudgement
	for _, j := range js {
		if j.Transport == "direct" {
			within = append(within, j)
			if j.DetectablePercent < 10 {
				t.Errorf("direct %s: detectable %d %%, below the minimum effect", j.Figure, j.DetectablePercent)
			}
		}
	}
	if c := regressedCondition(within, 1); c.Status != metav1.ConditionFalse ||
		!strings.Contains(c.Message, "none regressed; the least sensitive check, direct's tps, could not have seen a worsening smaller than") {
		t.Errorf("none regressed: %+v", c)
	}
	if c := regressedCondition(judge(latest, reference{}, regress.Rule{}), 1); c.Status != metav1.ConditionUnknown ||
		c.Reason != conditions.ReasonNotEnoughHistory {
		t.Errorf("without history: %+v", c)
	}
}
