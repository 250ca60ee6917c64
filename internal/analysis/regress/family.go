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
	rejects := closedTest(fig, family, members)
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
		f.Regressed = worseBy >= rule.MinEffect && rejects(bit)
		f.Together = f.Regressed && m.worse <= half
		f.Detectable = max(rule.MinEffect, fig.fraction(half))
		f.DetectableTogether = max(rule.MinEffect, fig.fraction(togetherEdge(fig, family, members, bit)))
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

// closedTest says, for each member (by its place in members), whether every group of members
// containing it is beyond its band.
func closedTest(fig Figure, family []Series, members []member) func(bit int) bool {
	k := len(members)
	if k > maxFamily {
		return func(bit int) bool {
			return members[bit].worse > edge(Alpha/float64(k), members[bit].sd, len(members[bit].logs))
		}
	}
	rejected := make([]bool, 1<<k)
	for mask := 1; mask < len(rejected); mask++ {
		rejected[mask] = groupRejects(fig, family, members, uint(mask))
	}
	return func(bit int) bool {
		for mask := 1; mask < len(rejected); mask++ {
			if mask&(1<<bit) != 0 && !rejected[mask] {
				return false
			}
		}
		return true
	}
}

// groupRejects tests the group of members in mask: is any of them worse than its history says?
func groupRejects(fig Figure, family []Series, members []member, mask uint) bool {
	size := bits.OnesCount(mask)
	for bit, m := range members {
		if mask&(1<<bit) != 0 && m.worse > edge(aloneAlpha(size), m.sd, len(m.logs)) {
			return true
		}
	}
	if size == 1 {
		return false
	}
	mean, ok := groupMean(fig, family, members, mask)
	return ok && mean.worse > edge(Alpha/2, mean.sd, len(mean.logs))
}

// groupMean is the group's mean logarithm as a member of its own, over the earlier benchmarks
// every one of them has in its reference; false when fewer than MinHistory are common (or a
// sample names no benchmark to match by).
func groupMean(fig Figure, family []Series, members []member, mask uint) (member, bool) {
	sums, counts := map[string]float64{}, map[string]int{}
	size, latest := 0, 0.0
	var order []string
	for bit, m := range members {
		if mask&(1<<bit) == 0 {
			continue
		}
		size++
		latest += math.Log(family[m.index].Latest.Value)
		for i, s := range m.ref {
			if s.Benchmark == "" {
				return member{}, false
			}
			if _, seen := counts[s.Benchmark]; !seen {
				order = append(order, s.Benchmark)
			}
			sums[s.Benchmark] += m.logs[i]
			counts[s.Benchmark]++
		}
	}
	g := member{}
	for _, b := range order {
		if counts[b] == size {
			g.logs = append(g.logs, sums[b]/float64(size))
		}
	}
	if len(g.logs) < MinHistory {
		return member{}, false
	}
	sum := stats.Summarize(g.logs)
	g.mean, g.sd = sum.Mean, sum.StdDev
	g.worse = g.mean - latest/float64(size)
	if fig.higherIsWorse() {
		g.worse = -g.worse
	}
	return g, true
}

// togetherEdge is how much worse, in logarithms, every member must be at once for the closed test
// to raise the member at bit, on results at their levels: the hardest of its groups, each beyond
// its band by the nearer of its two halves.
func togetherEdge(fig Figure, family []Series, members []member, bit int) float64 {
	k := len(members)
	if k > maxFamily {
		m := members[bit]
		return edge(Alpha/float64(k), m.sd, len(m.logs))
	}
	hardest := 0.0
	for mask := uint(1); mask < 1<<k; mask++ {
		if mask&(1<<bit) == 0 {
			continue
		}
		size := bits.OnesCount(mask)
		nearest := math.Inf(1)
		for b, m := range members {
			if mask&(1<<b) != 0 {
				nearest = min(nearest, edge(aloneAlpha(size), m.sd, len(m.logs)))
			}
		}
		if size > 1 {
			if mean, ok := groupMean(fig, family, members, mask); ok {
				nearest = min(nearest, edge(Alpha/2, mean.sd, len(mean.logs)))
			}
		}
		hardest = max(hardest, nearest)
	}
	return hardest
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
