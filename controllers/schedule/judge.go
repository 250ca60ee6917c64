package schedule

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/regress"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	"github.com/tunnelbench/tunnelbench/internal/history"
)

// seriesKey is a transport's figure in a schedule's series.
type seriesKey struct {
	transport string
	figure    regress.Figure
}

// reference is a schedule's earlier results, per transport and figure, oldest first.
type reference map[seriesKey][]regress.Sample

// referenceFromStore groups the store's points of the series, leaving out tb itself and what
// completed after it.
func referenceFromStore(points []history.Point, tb *benchv1.TunnelBenchmark) reference {
	ref := reference{}
	end := completedAt(tb)
	for _, p := range points {
		if p.UID == string(tb.UID) || !p.CompletedAt.Before(end) {
			continue
		}
		k := seriesKey{p.Transport, regress.Figure(p.Figure)}
		ref[k] = append(ref[k], regress.Sample{Benchmark: p.Benchmark, At: p.CompletedAt, Value: p.Value,
			Low: p.Low, High: p.High, Regressed: p.Regressed})
	}
	return ref
}

// referenceFromBenchmarks is the reference the kept benchmarks give when there is no store: the
// completed ones of tb's template that completed before it, each figure marked as its own
// judgement found it.
func referenceFromBenchmarks(tbs []benchv1.TunnelBenchmark, tb *benchv1.TunnelBenchmark) reference {
	earlier := slices.Clone(tbs)
	slices.SortStableFunc(earlier, func(a, b benchv1.TunnelBenchmark) int { return completedAt(&a).Compare(completedAt(&b)) })
	ref := reference{}
	end, hash := completedAt(tb), tb.Labels[benchv1.LabelTemplateHash]
	for i := range earlier {
		o := &earlier[i]
		if o.UID == tb.UID || o.Status.Phase != benchv1.PhaseCompleted || o.Labels[benchv1.LabelTemplateHash] != hash ||
			!completedAt(o).Before(end) {
			continue
		}
		for _, f := range regress.FromBenchmark(o) {
			for fig, s := range f.Samples {
				s.Regressed = foundRegressed(o, f.Transport, fig)
				ref[seriesKey{f.Transport, fig}] = append(ref[seriesKey{f.Transport, fig}], s)
			}
		}
	}
	return ref
}

func foundRegressed(tb *benchv1.TunnelBenchmark, transport string, fig regress.Figure) bool {
	for _, j := range tb.Status.Regression {
		if j.Transport == transport && j.Figure == string(fig) {
			return j.Regressed
		}
	}
	return false
}

// completedAt is when tb ended (its creation when it has no completion time).
func completedAt(tb *benchv1.TunnelBenchmark) time.Time {
	if tb.Status.CompletionTime != nil {
		return tb.Status.CompletionTime.Time
	}
	return tb.CreationTimestamp.Time
}

// judge judges every figure of tb against ref by rule, each figure across the transports at once
// (regress.JudgeFigures): in status order, the ratio before the absolute figure.
func judge(tb *benchv1.TunnelBenchmark, ref reference, rule regress.Rule) []benchv1.TransportJudgement {
	figures := regress.FromBenchmark(tb)
	history := func(transport string, fig regress.Figure) []regress.Sample { return ref[seriesKey{transport, fig}] }
	var out []benchv1.TransportJudgement
	for _, found := range regress.JudgeFigures(figures, history, rule) {
		s := found.After
		j := benchv1.TransportJudgement{Transport: found.Transport, Figure: string(found.Figure), Regressed: found.Regressed,
			After:  benchv1.TrendPoint{Benchmark: tb.Name, Value: s.Value, Low: s.Low, High: s.High},
			Reason: bounded.Text(found.Reason, 512)}
		if found.Checked {
			j.Before = &benchv1.TrendBand{Level: found.Before.Level, Low: found.Before.Low, High: found.Before.High,
				Results: int32(found.Before.N)}
			j.ChangePercent = int32(math.Round(100 * found.Change))
			j.DetectablePercent = int32(math.Round(100 * min(found.Detectable, 100)))
			j.DetectableTogetherPercent = int32(math.Round(100 * min(found.DetectableTogether, 100)))
		}
		out = append(out, j)
	}
	return out
}

// regressedCondition sums judgements up: True naming every regressed figure, False when every
// figure was judged within its history, Unknown while the history is too short to judge any.
func regressedCondition(js []benchv1.TransportJudgement, gen int64) metav1.Condition {
	c := metav1.Condition{Type: conditions.Regressed, ObservedGeneration: gen}
	var regressed []string
	checked := 0
	var blindest *benchv1.TransportJudgement
	for i, j := range js {
		if j.Before != nil {
			checked++
			if blindest == nil || j.DetectablePercent > blindest.DetectablePercent {
				blindest = &js[i]
			}
		}
		if j.Regressed {
			regressed = append(regressed, fmt.Sprintf("%s: %s", j.Transport, j.Reason))
		}
	}
	switch {
	case len(regressed) > 0:
		c.Status, c.Reason = metav1.ConditionTrue, conditions.ReasonRegressed
		c.Message = strings.Join(regressed, "; ")
	case checked == 0:
		c.Status, c.Reason = metav1.ConditionUnknown, conditions.ReasonNotEnoughHistory
		c.Message = fmt.Sprintf("fewer than %d earlier results of this template: nothing judged yet", regress.MinHistory)
	default:
		c.Status, c.Reason = metav1.ConditionFalse, conditions.ReasonWithinHistory
		c.Message = fmt.Sprintf("%d figures judged, none regressed; the least sensitive check, %s's %s, could not have seen a "+
			"worsening smaller than %d %% of its own, or %d %% of every transport together: more earlier results narrow the bands",
			checked, blindest.Transport, blindest.Figure, blindest.DetectablePercent, blindest.DetectableTogetherPercent)
	}
	c.Message = bounded.Text(c.Message, bounded.ConditionMessage)
	return c
}
