package results

import (
	"fmt"
	"math"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/precision"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/analysis/sweep"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
)

// sequentialDesign is the design of a benchmark with a precision target: looks after every round
// up to spec.load.repetitions, its bound. Nil without a target, and for what the target does not
// cover (the API refuses it with a sweep or sequential runs).
func sequentialDesign(tb *benchv1.TunnelBenchmark) *stats.Sequential {
	if tb.Spec.Load.Precision == nil || tb.Spec.Sweep != nil || tb.Order() == benchv1.OrderSequential {
		return nil
	}
	return &stats.Sequential{Rounds: int(tb.Repetitions())}
}

// compareSequentially sets each result of family's comparison with baseline: the design's
// repeated interval, the family adjusted together (stats.HolmSequential).
func compareSequentially(design stats.Sequential, baseline *benchv1.TransportResult, family []*benchv1.TransportResult) {
	ratios := make([]stats.SequentialRatio, len(family))
	errs := make([]error, len(family))
	for i, res := range family {
		b, c := benchv1.PairedFigures(baseline, res)
		ratios[i], errs[i] = stats.PairedSequential(design, b, c)
	}
	adjusted := stats.HolmSequential(ratios)
	for i, res := range family {
		out := sweep.Comparison(benchv1.MethodPaired, baseline.Transport, adjusted[i].Ratio, errs[i], 0)
		if errs[i] == nil {
			out.Reason = adjusted[i].Reason()
			out = withPlacements(out, baseline, res)
		}
		res.Comparison = out
	}
}

// judgePrecision sets status.precision from the comparisons at the latest complete round: the goal
// met, the bound reached (either stops the benchmark: stoppedAfter), or where it stands. A stop is
// kept once made, and the judgement is made only when every transport has run the same rounds,
// so that a look is a whole round.
func judgePrecision(tb *benchv1.TunnelBenchmark) {
	target := tb.Spec.Load.Precision
	if sequentialDesign(tb) == nil {
		tb.Status.Precision = nil
		return
	}
	st := tb.Status.Precision
	if st == nil {
		st = &benchv1.PrecisionStatus{Goal: target.Goal, MaxRounds: tb.Repetitions()}
		tb.Status.Precision = st
	}
	rounds, whole := completeRounds(tb)
	if st.StoppedAfter > 0 || !whole {
		return
	}
	st.Rounds = rounds
	widest, unsettled := 0.0, []string(nil)
	for _, res := range tb.Status.Results {
		if res.Transport == tb.Spec.Transports[0].Name {
			continue
		}
		c := res.Comparison
		if c == nil || c.Lower == nil || c.Upper == nil {
			unsettled = append(unsettled, res.Transport)
			widest = math.Inf(1)
			continue
		}
		widest = max(widest, precision.HalfWidth(*c.Lower, *c.Upper))
		if !precision.Settled(target, c.Verdict, *c.Lower, *c.Upper) {
			unsettled = append(unsettled, res.Transport)
		}
	}
	st.WidestHalfWidthPercent = nil
	if !math.IsInf(widest, 1) && len(tb.Status.Results) > 1 {
		st.WidestHalfWidthPercent = ptr.To(math.Round(widest*1e4) / 100)
	}
	st.Unsettled = unsettled
	looked := rounds >= stats.FirstLook
	st.Met = looked && len(unsettled) == 0
	switch {
	case st.Met:
		st.StoppedAfter = rounds
		st.Message = fmt.Sprintf("%s met after %d of at most %d rounds%s", goalText(target), rounds, st.MaxRounds, reached(st))
	case rounds >= st.MaxRounds:
		st.StoppedAfter = rounds
		st.Message = fmt.Sprintf("%s not met within the bound of %d rounds (spec.load.repetitions)%s; not settled: %s",
			goalText(target), st.MaxRounds, reached(st), strings.Join(unsettled, ", "))
	case !looked:
		st.Message = fmt.Sprintf("%d of at most %d rounds: the first look is after round %d", rounds, st.MaxRounds, stats.FirstLook)
	default:
		st.Message = fmt.Sprintf("%s not met after %d of at most %d rounds%s; not settled: %s", goalText(target), rounds,
			st.MaxRounds, reached(st), strings.Join(unsettled, ", "))
	}
	st.Message = bounded.Text(st.Message, 1024)
}

// StopShort ends a benchmark with a precision target after its complete rounds, the goal not
// met, for why (another round would pass spec.timeout): the benchmark then completes with what it
// reached.
func StopShort(tb *benchv1.TunnelBenchmark, why string) {
	st := tb.Status.Precision
	if st == nil || st.StoppedAfter > 0 {
		return
	}
	st.StoppedAfter = st.Rounds
	st.Message = bounded.Text(fmt.Sprintf("%s not met: stopped after %d of at most %d rounds, %s%s; not settled: %s",
		goalText(tb.Spec.Load.Precision), st.Rounds, st.MaxRounds, why, reached(st), strings.Join(st.Unsettled, ", ")), 1024)
	tb.Status.Progress = benchv1.ProgressString(doneRuns(tb), tb.TotalRuns())
}

// RoundOverruns reports whether a new round, the next run's, started now would likely end after
// deadline: when the target has had its first look and the rounds so far took on average more
// than what is left. Rounds are timed from the first run's start to the latest run's end, so
// the pods' start between runs counts.
func RoundOverruns(tb *benchv1.TunnelBenchmark, nextRound int32, now, deadline time.Time) bool {
	st := tb.Status.Precision
	if st == nil || st.StoppedAfter > 0 || st.Rounds < stats.FirstLook || nextRound != st.Rounds+1 {
		return false
	}
	var first, last time.Time
	for _, res := range tb.Status.Results {
		for _, run := range res.Runs {
			if run.StartTime != nil && (first.IsZero() || run.StartTime.Time.Before(first)) {
				first = run.StartTime.Time
			}
			if run.EndTime != nil && run.EndTime.After(last) {
				last = run.EndTime.Time
			}
		}
	}
	if first.IsZero() || !last.After(first) {
		return false
	}
	perRound := last.Sub(first) / time.Duration(st.Rounds)
	return now.Add(perRound).After(deadline)
}

// completeRounds is how many rounds every transport has run, and whether they all ran exactly
// that many (a round boundary); a transport without a result has run none.
func completeRounds(tb *benchv1.TunnelBenchmark) (int32, bool) {
	least, most := int32(math.MaxInt32), int32(0)
	for _, t := range tb.Spec.Transports {
		n := int32(0)
		if res := tb.Status.Result(t.Name); res != nil {
			n = res.Repetitions
		}
		least, most = min(least, n), max(most, n)
	}
	return least, least == most
}

// goalText names the goal as a user set it.
func goalText(target *benchv1.PrecisionTarget) string {
	if target.Goal == benchv1.PrecisionHalfWidth && target.HalfWidthPercent != nil {
		return fmt.Sprintf("precision ±%d %%", *target.HalfWidthPercent)
	}
	if target.MinEffectPercent != nil {
		return fmt.Sprintf("every verdict settled (faster, slower, or within ±%d %%)", *target.MinEffectPercent)
	}
	return "every verdict settled (faster or slower)"
}

// reached says how wide the widest interval is.
func reached(st *benchv1.PrecisionStatus) string {
	if st.WidestHalfWidthPercent == nil {
		return ""
	}
	return fmt.Sprintf("; the widest interval ±%.1f %%", *st.WidestHalfWidthPercent)
}

// doneRuns counts the runs recorded at every point.
func doneRuns(tb *benchv1.TunnelBenchmark) int {
	done := 0
	for _, r := range tb.Status.AllResults() {
		done += len(r.Runs)
	}
	return done
}
