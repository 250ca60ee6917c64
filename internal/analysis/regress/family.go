package regress

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
)

// A family is one figure across the transports of a benchmark, judged together so that what the
// transports share is used and the false-alarm rate still holds for the family as a whole.
//
// The transports of one benchmark share most of its drift (their tps correlate at 0.8 across
// benchmarks here, docs/studies/reproducibility.md), so pooling their spreads as if independent
// would overstate the degrees of freedom and raise false alarms. What they do give is this: a
// slower server or node moves every transport's figure at once, and the mean of their logarithms
// moves by as much while its noise is at most theirs. Closed testing (Marcus, Peritz & Gabriel,
// "On closed testing procedures with special reference to ordered analysis of variance",
// Biometrika 63, 1976) raises a transport only when every group of judged transports containing it
// is itself beyond its band, and holds the chance of any false alarm in the family to Alpha
// whatever the transports' correlation, because each group's test holds Alpha when none of its
// transports changed. A group's test (groupRejects) is the union of two halves at Alpha/2 each:
// the group's mean against the same benchmarks' means (Student's t prediction interval, exact for
// a group as for one transport), and Bonferroni over its members' own checks. A transport that
// alone slowed is found by the second as before; every transport slowed by a little is found by
// the first, where one transport's band at the old 0.5 % could not see it (TestServerSlowed).

// Series is one transport's figure: its earlier results, oldest first, and the newest.
type Series struct {
	Transport string
	History   []Sample
	Latest    Sample
}

// maxFamily bounds the closed test's 2^k groups (a benchmark has at most 16 transports); a larger
// family is judged by Bonferroni alone.
const maxFamily = 16

// member is a series with a reference long enough to judge.
type member struct {
	index    int
	ref      []Sample
	logs     []float64
	mean, sd float64
	// worse is how much worse the newest result is than the reference's level, in logarithms
	// (negative: better).
	worse float64
}

// edge is how far worse than its level (in logarithms) a result must lie to be beyond a one-sided
// band at false-alarm rate a, for a reference of n results with spread sd.
func edge(a, sd float64, n int) float64 {
	return stats.TQuantile(1-a, n-1) * sd * math.Sqrt(1+1/float64(n))
}

// aloneAlpha is each member's share of a group's rate in the Bonferroni half: the whole rate for a
// group of one (whose mean is the member).
func aloneAlpha(size int) float64 {
	if size == 1 {
		return Alpha
	}
	return Alpha / (2 * float64(size))
}

// CheckFamily judges the newest result of every series against its history, the series being one
// figure of the transports of one benchmark: a Finding per series, in order.
func CheckFamily(fig Figure, family []Series, rule Rule) []Finding {
	out := make([]Finding, len(family))
	var members []member
	for i, s := range family {
		out[i] = Finding{Figure: fig, After: s.Latest}
		ref := Reference(s.History, rule)
		v := s.Latest.Value
		switch {
		case len(ref) < MinHistory:
			out[i].Reason = fmt.Sprintf("%d earlier result(s) in the reference, %d needed", len(ref), MinHistory)
		case v <= 0 || math.IsNaN(v) || math.IsInf(v, 0):
			out[i].Reason = fmt.Sprintf("the new %s (%g) is not a positive figure", fig, v)
		default:
			members = append(members, newMember(i, fig, ref, v))
		}
	}
	k := len(members)
	if k == 0 {
		return out
	}
	closed := closedTest(fig, family, members)
	for bit, m := range members {
		f := &out[m.index]
		n := len(m.logs)
		half := edge(aloneAlpha(k), m.sd, n)
		if k > maxFamily {
			half = edge(Alpha/float64(k), m.sd, n)
		}
		f.Before = Band{Level: math.Exp(m.mean), Low: math.Exp(m.mean - half), High: math.Exp(m.mean + half), N: n}
		f.Checked = true
		f.Change = f.After.Value/f.Before.Level - 1
		worseBy := -f.Change
		if fig.higherIsWorse() {
			worseBy = f.Change
		}
		rejected, together := closed(bit)
		f.Regressed = worseBy >= rule.MinEffect && rejected
		f.Together = f.Regressed && m.worse <= half
		f.Detectable = max(rule.MinEffect, fig.fraction(half))
		f.DetectableTogether = max(rule.MinEffect, fig.fraction(together))
		f.Reason = reason(*f, rule)
	}
	return out
}

func newMember(index int, fig Figure, ref []Sample, latest float64) member {
	m := member{index: index, ref: ref, logs: make([]float64, len(ref))}
	for i, s := range ref {
		m.logs[i] = math.Log(s.Value)
	}
	sum := stats.Summarize(m.logs)
	m.mean, m.sd = sum.Mean, sum.StdDev
	m.worse = m.mean - math.Log(latest)
	if fig.higherIsWorse() {
		m.worse = -m.worse
	}
	return m
}

// fraction turns a worsening in logarithms into one of the level: 0.5 → a result 39 % lower, or
// 65 % higher for a figure that is worse higher.
func (f Figure) fraction(worse float64) float64 {
	if f.higherIsWorse() {
		return math.Exp(worse) - 1
	}
	return 1 - math.Exp(-worse)
}

// closedTest tests every group of members once and says, for each member (by its place in
// members), whether every group containing it is beyond its band, and how much worse (in
// logarithms) every member must be at once for that: the hardest of its groups, each beyond its
// band by the nearer of its two halves, on results at their levels.
func closedTest(fig Figure, family []Series, members []member) func(bit int) (bool, float64) {
	k := len(members)
	if k > maxFamily {
		return func(bit int) (bool, float64) {
			m := members[bit]
			e := edge(Alpha/float64(k), m.sd, len(m.logs))
			return m.worse > e, e
		}
	}
	groups := 1 << k
	rejected, nearest := make([]bool, groups), make([]float64, groups)
	byBenchmark := align(family, members)
	for mask := 1; mask < groups; mask++ {
		rejected[mask], nearest[mask] = groupTest(fig, members, byBenchmark, uint(mask))
	}
	return func(bit int) (bool, float64) {
		all, hardest := true, 0.0
		for mask := 1; mask < groups; mask++ {
			if mask&(1<<bit) != 0 {
				all = all && rejected[mask]
				hardest = max(hardest, nearest[mask])
			}
		}
		return all, hardest
	}
}

// groupTest tests the group of members in mask: is any of them worse than its history says? It
// also says how far worse than its level every member must be at once for the group's test to
// say so.
func groupTest(fig Figure, members []member, byBenchmark *aligned, mask uint) (rejected bool, nearest float64) {
	size := bits.OnesCount(mask)
	nearest = math.Inf(1)
	for bit, m := range members {
		if mask&(1<<bit) == 0 {
			continue
		}
		e := edge(aloneAlpha(size), m.sd, len(m.logs))
		rejected = rejected || m.worse > e
		nearest = min(nearest, e)
	}
	if size == 1 {
		return rejected, nearest
	}
	if mean, ok := byBenchmark.groupMean(fig, mask); ok {
		e := edge(Alpha/2, mean.sd, len(mean.logs))
		rejected = rejected || mean.worse > e
		nearest = min(nearest, e)
	}
	return rejected, nearest
}

// aligned is the members' reference logarithms by earlier benchmark: logs[b][i] is member i's at
// benchmark b, NaN where its reference lacks it; latest[i] is its newest result's. It is nil when
// a sample names no benchmark to match by.
type aligned struct {
	logs   [][]float64
	latest []float64
}

func align(family []Series, members []member) *aligned {
	index := map[string]int{}
	a := &aligned{latest: make([]float64, len(members))}
	for i, m := range members {
		a.latest[i] = math.Log(family[m.index].Latest.Value)
		for j, s := range m.ref {
			if s.Benchmark == "" {
				return nil
			}
			b, ok := index[s.Benchmark]
			if !ok {
				b = len(a.logs)
				index[s.Benchmark] = b
				row := make([]float64, len(members))
				for r := range row {
					row[r] = math.NaN()
				}
				a.logs = append(a.logs, row)
			}
			a.logs[b][i] = m.logs[j]
		}
	}
	return a
}

// groupMean is the group's mean logarithm as a member of its own, over the earlier benchmarks
// every one of them has in its reference; false when fewer than MinHistory are common (or a
// sample names no benchmark to match by).
func (a *aligned) groupMean(fig Figure, mask uint) (member, bool) {
	if a == nil {
		return member{}, false
	}
	size := float64(bits.OnesCount(mask))
	g, latest := member{}, 0.0
	for i, v := range a.latest {
		if mask&(1<<i) != 0 {
			latest += v
		}
	}
	for _, row := range a.logs {
		sum, common := 0.0, true
		for i, v := range row {
			if mask&(1<<i) != 0 {
				common = common && !math.IsNaN(v)
				sum += v
			}
		}
		if common {
			g.logs = append(g.logs, sum/size)
		}
	}
	if len(g.logs) < MinHistory {
		return member{}, false
	}
	sum := stats.Summarize(g.logs)
	g.mean, g.sd = sum.Mean, sum.StdDev
	g.worse = g.mean - latest/size
	if fig.higherIsWorse() {
		g.worse = -g.worse
	}
	return g, true
}

// Figures judged, in the order a benchmark's status shows them: the ratio before the absolute
// figure.
var judgedFigures = []Figure{FigureRatio, FigureTPS, FigureLatency, FigureThroughput}

// Judged is the finding of one transport's figure.
type Judged struct {
	Transport string
	Finding
}

// JudgeFigures judges what one benchmark measured (FromBenchmark), each figure as a family across
// its transports, against the earlier results history gives: per transport in order, the ratio
// before the absolute figure.
func JudgeFigures(figures []Figures, history func(transport string, fig Figure) []Sample, rule Rule) []Judged {
	found := map[string]map[Figure]Finding{}
	for _, fig := range judgedFigures {
		var family []Series
		for _, f := range figures {
			if s, ok := f.Samples[fig]; ok {
				family = append(family, Series{Transport: f.Transport, History: history(f.Transport, fig), Latest: s})
			}
		}
		for i, finding := range CheckFamily(fig, family, rule) {
			if found[family[i].Transport] == nil {
				found[family[i].Transport] = map[Figure]Finding{}
			}
			found[family[i].Transport][fig] = finding
		}
	}
	var out []Judged
	for _, f := range figures {
		for _, fig := range judgedFigures {
			if finding, ok := found[f.Transport][fig]; ok {
				out = append(out, Judged{Transport: f.Transport, Finding: finding})
			}
		}
	}
	return out
}
