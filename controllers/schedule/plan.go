package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	"github.com/tunnelbench/tunnelbench/internal/operator/cronplan"
	"github.com/tunnelbench/tunnelbench/internal/operator/runseal"
)

// scheduleView is what the schedule's controller observed.
type scheduleView struct {
	stb *benchv1.ScheduledTunnelBenchmark
	// benchmarks are the benchmarks the schedule owns.
	benchmarks []benchv1.TunnelBenchmark
	now        time.Time
	// store is true when the operator has a history store: a benchmark is deleted only once
	// recorded there.
	store bool
	// author is whether the schedule's author may still do what a run does, asked only when one
	// is due (authorView.checked).
	author authorView
	// seal seals the run created.
	seal runseal.Key
}

// authorView is what the API server answered about the schedule's recorded author.
type authorView struct {
	// checked is false without an admission webhook (no author is recorded, nothing checked), or
	// before the question was asked.
	checked bool
	// name is the author's user name; empty when none is recorded (reason ReasonNoAuthor).
	name string
	// refusals are the accesses the author lacks, or why no author is known; none: the run may go.
	refusals []string
}

// scheduleEvent is an event to record on the schedule.
type scheduleEvent struct {
	warning      bool
	reason, note string
}

// schedulePlan is what the schedule's controller does, decided from a scheduleView alone.
type schedulePlan struct {
	create *benchv1.TunnelBenchmark
	cancel []string
	delete []string
	status benchv1.ScheduledTunnelBenchmarkStatus
	events []scheduleEvent
	// requeue is when to look again: the next run.
	requeue time.Duration
}

// planSchedule decides what a schedule does now: the run due (created, skipped or replacing the
// running one), the ended benchmarks beyond the limits (deleted once judged and, with a store,
// recorded), and the status that says so.
func planSchedule(v scheduleView) schedulePlan {
	stb := v.stb
	p := schedulePlan{status: *stb.Status.DeepCopy()}
	p.status.ObservedGeneration = stb.Generation
	p.status.TemplateHash = stb.TemplateHash()
	s, err := cronplan.Parse(stb.Spec.Schedule, ptr.Deref(stb.Spec.TimeZone, ""))
	if err != nil {
		setScheduleCondition(&p.status, stb.Generation, conditions.Ready, metav1.ConditionFalse, conditions.ReasonInvalidSchedule, err.Error())
		p.status.NextScheduleTime = nil
		return p
	}
	since := stb.CreationTimestamp.Time
	if t := stb.Status.LastScheduleTime; t != nil {
		since = t.Time
	}
	d := cronplan.Decide(s, cronplan.Observed{Now: v.now, Since: since, Suspended: stb.Suspended(),
		Policy: cronplan.Policy(stb.Policy()), StartingDeadline: stb.StartingDeadline(), Active: active(v.benchmarks),
		Started: func(due time.Time) bool {
			name := cronplan.BenchmarkName(stb.Name, due)
			return slices.ContainsFunc(v.benchmarks, func(tb benchv1.TunnelBenchmark) bool { return tb.Name == name })
		}})
	if !d.Due.IsZero() {
		p.status.LastScheduleTime = &metav1.Time{Time: d.Due}
	}
	p.status.Skipped += int32(d.Skipped)
	if d.Skipped > 0 {
		p.events = append(p.events, scheduleEvent{warning: true, reason: conditions.ReasonRunSkipped, note: d.Why})
	}
	if d.Start && authorMayRun(&p, stb.Generation, v.author, d.Due) {
		p.create = benchmarkFor(stb, d.Due, p.status.TemplateHash, v.seal)
		p.cancel = d.Cancel
		p.events = append(p.events, scheduleEvent{reason: conditions.ReasonBenchmarkCreated,
			note: "created " + p.create.Name + " for the run due at " + d.Due.UTC().Format(time.RFC3339)})
	}
	p.status.NextScheduleTime = &metav1.Time{Time: d.Next}
	p.requeue = max(d.Next.Sub(v.now), time.Second)
	if stb.Suspended() {
		p.status.NextScheduleTime = nil
		setScheduleCondition(&p.status, stb.Generation, conditions.Ready, metav1.ConditionFalse, conditions.ReasonSuspended,
			"spec.suspend is true: no run starts")
	} else {
		setScheduleCondition(&p.status, stb.Generation, conditions.Ready, metav1.ConditionTrue, conditions.ReasonScheduled,
			"the next run is due at "+d.Next.UTC().Format(time.RFC3339))
	}
	p.delete = prunable(stb, v.benchmarks, v.store)
	p.status.Benchmarks = kept(v.benchmarks, p.create, p.delete)
	for _, tb := range v.benchmarks {
		if tb.Status.Phase == benchv1.PhaseCompleted && tb.Status.CompletionTime != nil &&
			(p.status.LastSuccessfulTime == nil || tb.Status.CompletionTime.After(p.status.LastSuccessfulTime.Time)) {
			p.status.LastSuccessfulTime = tb.Status.CompletionTime.DeepCopy()
		}
	}
	return p
}

// active names the benchmarks that have not ended.
func active(tbs []benchv1.TunnelBenchmark) []string {
	var out []string
	for _, tb := range tbs {
		if !tb.Status.Phase.IsTerminal() && tb.DeletionTimestamp == nil {
			out = append(out, tb.Name)
		}
	}
	return out
}

// prunable names the ended benchmarks beyond the schedule's limits, among those that may go: a
// completed benchmark once judged and, with a store, recorded.
func prunable(stb *benchv1.ScheduledTunnelBenchmark, tbs []benchv1.TunnelBenchmark, store bool) []string {
	var done []cronplan.Finished
	for _, tb := range tbs {
		if !tb.Status.Phase.IsTerminal() || tb.DeletionTimestamp != nil {
			continue
		}
		ok := tb.Status.Phase == benchv1.PhaseCompleted
		if ok && (!Judged(&tb) || store && (tb.Status.History == nil || !tb.Status.History.Recorded)) {
			continue
		}
		ended := tb.CreationTimestamp.Time
		if tb.Status.CompletionTime != nil {
			ended = tb.Status.CompletionTime.Time
		}
		done = append(done, cronplan.Finished{Name: tb.Name, Succeeded: ok, Ended: ended})
	}
	succeeded, failed := stb.Limits()
	return cronplan.Prune(done, succeeded, failed)
}

// Judged says whether a completed benchmark's results were judged against the schedule's history.
func Judged(tb *benchv1.TunnelBenchmark) bool {
	return meta.FindStatusCondition(tb.Status.Conditions, conditions.Regressed) != nil
}

// kept is the status's list of benchmarks: those not deleted, with the one created, by the time
// their run was due.
func kept(tbs []benchv1.TunnelBenchmark, created *benchv1.TunnelBenchmark, deleted []string) []benchv1.ScheduledBenchmark {
	var out []benchv1.ScheduledBenchmark
	for i := range tbs {
		tb := &tbs[i]
		if slices.Contains(deleted, tb.Name) || created != nil && tb.Name == created.Name {
			continue
		}
		out = append(out, benchv1.ScheduledBenchmark{Name: tb.Name, ScheduledTime: scheduledAt(tb), Phase: tb.Status.Phase,
			Recorded: tb.Status.History != nil && tb.Status.History.Recorded})
	}
	if created != nil {
		out = append(out, benchv1.ScheduledBenchmark{Name: created.Name, ScheduledTime: scheduledAt(created)})
	}
	slices.SortStableFunc(out, func(a, b benchv1.ScheduledBenchmark) int { return a.ScheduledTime.Compare(b.ScheduledTime.Time) })
	// Benchmarks wait to be pruned until judged and recorded: a store down for long keeps more
	// than the limits, and the status lists the newest its schema allows.
	if len(out) > maxListedBenchmarks {
		out = out[len(out)-maxListedBenchmarks:]
	}
	return out
}

// maxListedBenchmarks is status.benchmarks' MaxItems.
const maxListedBenchmarks = 202

// scheduledAt is when a schedule's benchmark was due, from its annotation (its creation when
// unreadable).
func scheduledAt(tb *benchv1.TunnelBenchmark) metav1.Time {
	if t, err := time.Parse(time.RFC3339, tb.Annotations[benchv1.AnnotationScheduledAt]); err == nil {
		return metav1.Time{Time: t}
	}
	return tb.CreationTimestamp
}

// authorMayRun says whether the run due at due may be created, as the author's view says, and
// records why not (the Authorized condition, an event): a run the author could not create
// themselves is not created for them. It is missed, as a run whose creation failed.
func authorMayRun(p *schedulePlan, gen int64, a authorView, due time.Time) bool {
	if !a.checked {
		return true
	}
	if len(a.refusals) == 0 {
		setScheduleCondition(&p.status, gen, conditions.Authorized, metav1.ConditionTrue, conditions.ReasonAuthorMayRun,
			fmt.Sprintf("at the run due at %s, its author %q held every access it needs", due.UTC().Format(time.RFC3339), a.name))
		return true
	}
	reason, msg := conditions.ReasonAuthorLacksAccess, fmt.Sprintf("the run due at %s was not created: its author %q lacks access: %s",
		due.UTC().Format(time.RFC3339), a.name, strings.Join(a.refusals, "; "))
	if a.name == "" {
		reason, msg = conditions.ReasonNoAuthor, fmt.Sprintf("the run due at %s was not created: %s", due.UTC().Format(time.RFC3339),
			strings.Join(a.refusals, "; "))
	}
	setScheduleCondition(&p.status, gen, conditions.Authorized, metav1.ConditionFalse, reason, msg)
	p.events = append(p.events, scheduleEvent{warning: true, reason: reason, note: msg})
	return false
}

// benchmarkFor is the benchmark a schedule creates for the run due at due: its template, owned
// by the schedule, labelled with it and the template's hash, and sealed with key.
func benchmarkFor(stb *benchv1.ScheduledTunnelBenchmark, due time.Time, hash string, key runseal.Key) *benchv1.TunnelBenchmark {
	t := stb.Spec.BenchmarkTemplate
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{
		Namespace: stb.Namespace, Name: cronplan.BenchmarkName(stb.Name, due),
		Labels: map[string]string{}, Annotations: map[string]string{},
	}, Spec: *t.Spec.DeepCopy()}
	for k, v := range t.Metadata.Labels {
		tb.Labels[k] = v
	}
	for k, v := range t.Metadata.Annotations {
		tb.Annotations[k] = v
	}
	tb.Labels[benchv1.LabelSchedule] = stb.Name
	tb.Labels[benchv1.LabelTemplateHash] = hash
	tb.Annotations[benchv1.AnnotationScheduledAt] = due.UTC().Format(time.RFC3339)
	tb.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(stb, benchv1.GroupVersion.WithKind("ScheduledTunnelBenchmark"))}
	// Last: the template's own annotations may not replace it.
	tb.Annotations[benchv1.AnnotationRunSeal] = key.Seal(tb, stb.Name, stb.UID)
	return tb
}

// setScheduleCondition sets a condition of the schedule's status.
func setScheduleCondition(st *benchv1.ScheduledTunnelBenchmarkStatus, gen int64, typ string, status metav1.ConditionStatus,
	reason, msg string) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: bounded.Text(msg, bounded.ConditionMessage), ObservedGeneration: gen})
}
