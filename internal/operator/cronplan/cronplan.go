// Package cronplan decides what a ScheduledTunnelBenchmark does now: which run is due, whether
// it starts, is skipped or replaces the running one, which finished benchmarks go, and when to
// look again. It reads a cron schedule as a CronJob does (robfig/cron's standard parser: five
// fields or a macro, in a time zone) and acts on nothing: the controller observes and acts.
package cronplan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a parsed cron schedule in its time zone.
type Schedule struct {
	cron cron.Schedule
	loc  *time.Location
}

// Parse reads spec (five fields or a macro) in the IANA time zone tz (UTC when empty). A time zone
// inside spec (CRON_TZ=, TZ=) is refused, as CronJob refuses it: timeZone is the one place for it.
func Parse(spec, tz string) (Schedule, error) {
	if strings.Contains(spec, "TZ=") {
		return Schedule{}, fmt.Errorf("schedule %q: set the time zone in timeZone, not with CRON_TZ or TZ in the schedule", spec)
	}
	loc := time.UTC
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return Schedule{}, fmt.Errorf("timeZone %q is not a time zone this operator knows (IANA names such as Europe/Paris): %w", tz, err)
		}
		loc = l
	}
	c, err := cron.ParseStandard(spec)
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule %q is not a cron schedule "+
			"(five fields: minute hour day-of-month month day-of-week, or @hourly, @daily…): %w", spec, err)
	}
	return Schedule{cron: c, loc: loc}, nil
}

// Next is the first time the schedule fires after t.
func (s Schedule) Next(t time.Time) time.Time { return s.cron.Next(t.In(s.loc)) }

// Policy is what to do when a run is due while an earlier benchmark runs.
type Policy string

// Policies, as ScheduledTunnelBenchmarkSpec.ConcurrencyPolicy names them.
const (
	Forbid  Policy = "Forbid"
	Replace Policy = "Replace"
	Allow   Policy = "Allow"
)

// Observed is what the controller saw.
type Observed struct {
	Now time.Time
	// Since is when the schedule began counting: its last scheduled run, or its creation.
	Since            time.Time
	Suspended        bool
	Policy           Policy
	StartingDeadline time.Duration
	// Active names the schedule's benchmarks that have not ended.
	Active []string
	// Started says whether a run already has its benchmark: an earlier decision was acted on
	// but its record of it was lost (a conflict on the status write), so the run is neither
	// started again nor counted as skipped because its own benchmark runs.
	Started func(due time.Time) bool
}

// Decision is what to do.
type Decision struct {
	// Due is the run that came due since Since, the latest of them; zero when none did. The
	// controller records it as the last scheduled time whatever happens to it.
	Due time.Time
	// Start is true when Due's benchmark is to be created.
	Start bool
	// Cancel names running benchmarks to cancel first (Replace).
	Cancel []string
	// Skipped counts the runs that came due and will not run; Why says why.
	Skipped int
	Why     string
	// Next is when the next run is due: when to look again.
	Next time.Time
}

// maxMissed bounds one decision's walk over missed runs: an operator down for a year on a schedule
// of every minute catches up over several decisions, each recording the last run it reached (far
// beyond the starting deadline: skipped) instead of spinning through half a million at once.
const maxMissed = 10000

// Decide is what to do at o.Now.
func Decide(s Schedule, o Observed) Decision {
	d := Decision{Next: s.Next(o.Now)}
	missed, unstarted := 0, 0
	started := func(t time.Time) bool { return o.Started != nil && o.Started(t) }
	for t := s.Next(o.Since); !t.After(o.Now); t = s.Next(t) {
		d.Due = t
		if !started(t) {
			unstarted++
		}
		if missed++; missed == maxMissed {
			break
		}
	}
	if d.Due.IsZero() {
		return d
	}
	// Every run due before the latest is missed, unless it has its benchmark: at most one
	// starts, as CronJob does.
	d.Skipped = unstarted
	if !started(d.Due) {
		d.Skipped--
	}
	switch {
	case started(d.Due):
	case o.Suspended:
		d.Skipped++
		d.Why = "the schedule is suspended"
	case o.StartingDeadline > 0 && o.Now.Sub(d.Due) > o.StartingDeadline:
		d.Skipped++
		d.Why = fmt.Sprintf("the run due at %s was missed by more than the starting deadline (%s)",
			d.Due.UTC().Format(time.RFC3339), o.StartingDeadline)
	case len(o.Active) > 0 && o.Policy == Forbid:
		d.Skipped++
		d.Why = fmt.Sprintf("%s still runs (concurrencyPolicy Forbid)", strings.Join(o.Active, ", "))
	case len(o.Active) > 0 && o.Policy == Replace:
		d.Start, d.Cancel = true, o.Active
	default:
		d.Start = true
	}
	if d.Skipped > 0 && d.Why == "" {
		d.Why = fmt.Sprintf("%d earlier run(s) were missed (only the latest due starts)", d.Skipped)
	}
	return d
}

// BenchmarkName is the name of the benchmark a schedule creates for the run due at due: the
// schedule's name and the minutes since the epoch, as a CronJob names its Jobs, so that two
// operators (or one that restarted) create the same benchmark, never two.
func BenchmarkName(schedule string, due time.Time) string {
	return fmt.Sprintf("%s-%d", schedule, due.Unix()/60)
}

// Finished is an ended benchmark of a schedule.
type Finished struct {
	Name      string
	Succeeded bool
	Ended     time.Time
}

// Prune names the ended benchmarks to delete, oldest first: all but the newest keepSucceeded that
// completed and the newest keepFailed that failed or were cancelled.
func Prune(done []Finished, keepSucceeded, keepFailed int) []string {
	sorted := slices.Clone(done)
	slices.SortStableFunc(sorted, func(a, b Finished) int { return b.Ended.Compare(a.Ended) })
	var out []string
	kept := map[bool]int{}
	for _, f := range sorted {
		limit := keepFailed
		if f.Succeeded {
			limit = keepSucceeded
		}
		if kept[f.Succeeded] < limit {
			kept[f.Succeeded]++
			continue
		}
		out = append(out, f.Name)
	}
	slices.Reverse(out)
	return out
}
