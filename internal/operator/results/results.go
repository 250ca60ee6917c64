// Package results turns what runs reported into a benchmark's status: each run's figures recorded
// on its transport's result, the summaries over rounds, the comparisons with the baseline and the
// best transport at every point. Pure: the reconciler calls it in the pass that read a run's
// report, and its tests need no API server.
package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/cost"
	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/analysis/sweep"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// Record adds one run's report to its transport's result: the run's own figures, the details of
// the path as the latest run saw them, and the summaries over the runs so far. Each transport then
// records its own part (Transport.Record) on the returned result.
func Record(tb *benchv1.TunnelBenchmark, point int, t benchv1.TransportSpec, run benchv1.RunResult, rep *report.Report,
	pod specs.Pod) *benchv1.TransportResult {
	out := tb.ResultFor(point, t)
	if !rep.StartTime.IsZero() {
		run.StartTime = &metav1.Time{Time: rep.StartTime}
	}
	if !rep.EndTime.IsZero() {
		run.EndTime = &metav1.Time{Time: rep.EndTime}
	}
	if w := rep.Window; w != nil {
		run.WindowSeconds = ptr.To(w.Seconds())
	}
	out.Command, out.Executed, out.Connection = rep.Command, rep.Executed, transport.ConnInfo(pod.Env)
	out.TLS = nil
	if rep.TLS != nil {
		out.TLS = &benchv1.NegotiatedTLS{Version: rep.TLS.Version, Cipher: rep.TLS.Cipher}
	}
	if c := rep.Copy; c != nil {
		run.MBPerSecond, run.RowsPerSecond = ptr.To(c.MBPerSecond), ptr.To(c.RowsPerSecond)
		run.Wire = cost.Wire(rep.Wire, 0, c.Rows)
		out.Runs = append(out.Runs, run)
		out.Repetitions = run.Round
		aggregateCopies(out, c)
		return out
	}
	res := rep.Result
	run.TPS, run.LatencyAvgMs, run.ConnectionTimeMs = res.TPS, res.LatencyAvgMs, res.ConnectionTimeMs
	run.Transactions, run.FailedTransactions = res.Transactions, res.FailedTransactions
	run.SerializationFailures, run.DeadlockFailures = ptr.Deref(res.SerializationFailures, 0), ptr.Deref(res.DeadlockFailures, 0)
	run.P99Ms, run.CycleMs = runP99(rep.Latency), CycleMs(tb, res)
	run.OpenLoop = openLoopRun(tb, res.OpenLoop)
	run.Steadiness = steadiness(res.Progress)
	run.Wire = cost.Wire(rep.Wire, res.Transactions, 0)
	if su := rep.Setup; su != nil {
		run.Setup = &benchv1.ConnectionSetup{Probes: int32(min(su.Probes, 1000)), ResolveMs: su.ResolveMs, TCPMs: su.TCPMs,
			TLSMs: su.TLSMs, StartupMs: su.StartupMs, TotalMs: su.TotalMs}
	}
	out.Runs = append(out.Runs, run)
	out.Repetitions = run.Round

	// The path as the latest run saw it.
	out.TPSIncludingConnections, out.LatencyStddevMs = res.TPSIncludingConnections, res.LatencyStddevMs
	out.ConnectionStorm = nil
	if s := rep.Storm; s != nil {
		out.ConnectionStorm = stormResult(s)
	}
	if len(res.Progress) > 0 {
		// A transport's points share its budget.
		out.Series = append(out.Series, runSeries(run.Round, res.Progress, maxSeriesPoints/(tb.Points()*int(tb.Repetitions()))))
	}

	aggregateRuns(out, res.Reconnect)
	return out
}

// openLoopRun is how an open-loop run kept its schedule, nil for a closed loop: what the spec
// asked and what pgbench reported of it.
func openLoopRun(tb *benchv1.TunnelBenchmark, o *engine.OpenLoop) *benchv1.OpenLoopRun {
	if tb.Spec.Load.Rate == nil {
		return nil
	}
	out := &benchv1.OpenLoopRun{RateTPS: *tb.Spec.Load.Rate}
	if o != nil {
		out.ScheduleLagMs, out.ScheduleLagMaxMs, out.Skipped, out.Late = o.LagAvgMs, o.LagMaxMs, o.Skipped, o.Late
	}
	return out
}

// maxSeriesPoints bounds the tps-over-time points of one transport in status, over all its runs.
const maxSeriesPoints = 120

// runSeries is a run's progress as status keeps it: at most maxPoints, rounded to 0.1.
func runSeries(round int32, progress []engine.ProgressPoint, maxPoints int) benchv1.RunSeries {
	out := benchv1.RunSeries{Round: round}
	for _, p := range engine.Downsample(progress, max(maxPoints, 1)) {
		out.Seconds = append(out.Seconds, math.Round(p.T*10)/10)
		out.TPS = append(out.TPS, math.Round(p.TPS*10)/10)
	}
	return out
}

// MergeLatency sets a transport's latency distribution from its runs' histograms, merged weighted
// by their transactions (latency.MergeWeighted). A run whose histogram is missing (a runner before
// transaction logs) leaves the distribution unset rather than describe only some runs.
func MergeLatency(out *benchv1.TransportResult, runs []*report.Latency) error {
	out.Latency = nil
	if len(runs) == 0 {
		return nil
	}
	samples := make([]latency.Sample, 0, len(runs))
	dist := &benchv1.LatencyDistribution{SamplingRate: 1}
	for _, l := range runs {
		if l == nil {
			return nil
		}
		samples = append(samples, latency.Sample{Encoded: l.Histogram, Rate: orOne(l.SamplingRate)})
		dist.SamplingRate = min(dist.SamplingRate, orOne(l.SamplingRate))
		dist.Samples += l.Samples
		dist.FailedSampled += l.Failed
		dist.SkippedSampled += l.Skipped
	}
	h, effective, err := latency.MergeWeighted(samples)
	if err != nil {
		return err
	}
	p, err := latency.PercentilesOf(h)
	if err != nil {
		// Nothing completed: no latency to describe.
		return nil
	}
	dist.EffectiveSamples = int64(math.Floor(effective))
	dist.P50Ms, dist.MaxMs = p.P50, p.Max
	dist.P90Ms = supported(&dist.Unsupported, "p90", 0.9, p.P90, effective)
	dist.P99Ms = supported(&dist.Unsupported, "p99", 0.99, p.P99, effective)
	dist.P999Ms = supported(&dist.Unsupported, "p99.9", 0.999, p.P999, effective)
	out.Latency = dist
	return nil
}

// supported is the percentile's figure when enough samples lie beyond it, else nil with its name
// added to unsupported.
func supported(unsupported *[]string, name string, q, ms, samples float64) *float64 {
	if latency.Supported(q, samples) {
		return ptr.To(ms)
	}
	*unsupported = append(*unsupported, name)
	return nil
}

// PathRate is the highest tps the transport's earlier runs measured, or 0 before its first: what
// the runner sizes the transaction log's sampling by when there is no warm-up to measure it, so
// that a slow path logs all its transactions rather than a sample sized for the fastest path.
// Another transport's rate would not do: the path not yet measured may be faster than any, and a
// log sized too small for it would fill the pod's memory.
func PathRate(results []benchv1.TransportResult, transport string) float64 {
	res := benchv1.FindResult(results, transport)
	if res == nil {
		return 0
	}
	top := 0.0
	for _, run := range res.Runs {
		top = max(top, run.TPS)
	}
	return top
}

// orOne is a sampling rate, 1 when a report does not say (everything was logged).
func orOne(rate float64) float64 {
	if rate <= 0 {
		return 1
	}
	return rate
}

// runP99 is one run's 99th percentile latency in milliseconds, or nil without a histogram or
// with too few samples beyond it.
func runP99(l *report.Latency) *float64 {
	if l == nil {
		return nil
	}
	h, err := latency.Merge(l.Histogram)
	if err != nil {
		return nil
	}
	p, err := latency.PercentilesOf(h)
	if err != nil || !latency.Supported(0.99, float64(p.Count)) {
		return nil
	}
	return ptr.To(p.P99)
}

// aggregateRuns derives a transport's figures from its runs: medians with their spread, and sums.
func aggregateRuns(out *benchv1.TransportResult, reconnect bool) {
	var tps, latency, connect []float64
	out.Transactions, out.FailedTransactions = 0, 0
	for _, r := range out.Runs {
		tps, latency, connect = append(tps, r.TPS), append(latency, r.LatencyAvgMs), append(connect, r.ConnectionTimeMs)
		out.Transactions += r.Transactions
		out.FailedTransactions += r.FailedTransactions
	}
	out.TPSSpread, out.LatencySpread = spread(tps), spread(latency)
	out.TPS, out.LatencyAvgMs = out.TPSSpread.Median, out.LatencySpread.Median
	out.ConnectionTimeMs = stats.Summarize(connect).Median
	out.StartTime, out.EndTime = out.Runs[0].StartTime, out.Runs[len(out.Runs)-1].EndTime
	out.ConnectionsPerSecond = nil
	if reconnect && out.Transactions > 0 {
		// One connection per transaction, failed ones included.
		perSecond := out.TPS * float64(out.Transactions+out.FailedTransactions) / float64(out.Transactions)
		out.ConnectionsPerSecond = &perSecond
	}
}

// aggregateCopies derives a copy load's figures from its runs: the medians of MB/s and rows/s,
// with the latest run's size.
func aggregateCopies(out *benchv1.TransportResult, latest *report.Copy) {
	var mbps, rows []float64
	for _, r := range out.Runs {
		if r.MBPerSecond != nil && r.RowsPerSecond != nil {
			mbps, rows = append(mbps, *r.MBPerSecond), append(rows, *r.RowsPerSecond)
		}
	}
	out.Copy = &benchv1.CopyResult{Data: benchv1.CopyData(latest.Data), Bytes: latest.Bytes, Rows: latest.Rows,
		MBPerSecondSpread: spread(mbps), RowsPerSecond: stats.Median(rows)}
	out.Copy.MBPerSecond = out.Copy.MBPerSecondSpread.Median
	out.StartTime, out.EndTime = out.Runs[0].StartTime, out.Runs[len(out.Runs)-1].EndTime
}

// figure is a transport's median of its runs' Figure.
func figure(r *benchv1.TransportResult) float64 {
	switch {
	case r.Copy != nil:
		return r.Copy.MBPerSecond
	case len(r.Runs) > 0 && r.Runs[0].OpenLoop != nil:
		return stats.Median(r.CountedFigures())
	}
	return r.TPS
}

func spread(xs []float64) *benchv1.Spread {
	s := stats.Summarize(xs)
	out := &benchv1.Spread{Median: s.Median, Min: s.Min, Max: s.Max}
	if s.N >= 2 {
		out.CV = ptr.To(s.CV)
	}
	return out
}

// Summarize derives the progress and, at every point, each result's comparison with the baseline
// (the first transport in the spec) and the best transport from the recorded runs; for a sweep,
// each transport's curve across the points.
func Summarize(tb *benchv1.TunnelBenchmark) {
	method := methodOf(tb.Order())
	design := sequentialDesign(tb)
	if tb.Spec.Sweep == nil {
		tb.Status.Best = summarizePoint(method, design, tb.Spec.Transports[0].Name, tb.Status.Results)
		// A precision target met ends the rounds, and with them the runs progress counts.
		judgePrecision(tb)
		tb.Status.Progress = benchv1.ProgressString(doneRuns(tb), tb.TotalRuns())
		return
	}
	tb.Status.Progress = benchv1.ProgressString(doneRuns(tb), tb.TotalRuns())
	tb.InitSweep()
	for point := range tb.Points() {
		tb.Status.Sweep.Points[point].Best = summarizePoint(method, design, tb.Spec.Transports[0].Name, tb.ResultsAt(point))
	}
	tb.Status.Sweep.Curves = sweep.Curves(method, tb.Spec.Transports, sweep.PointsOf(tb))
}

// summarizePoint sets each result's comparison with the baseline, all measured at one point, and
// returns the best of them. With a sequential design (a precision target) the comparisons are the
// design's repeated intervals.
func summarizePoint(method benchv1.ComparisonMethod, design *stats.Sequential, baselineName string,
	results []benchv1.TransportResult) *benchv1.BestTransport {
	baseline := benchv1.FindResult(results, baselineName)
	var family []*benchv1.TransportResult
	for i := range results {
		res := &results[i]
		res.Comparison = nil
		switch {
		case baseline == nil:
		case res.Transport == baseline.Transport:
			res.Comparison = &benchv1.Comparison{Baseline: baseline.Transport, Ratio: 1, Pairs: int32(len(res.Runs)),
				Verdict: benchv1.VerdictBaseline, Reason: "the baseline: every other transport is compared with it"}
		default:
			family = append(family, res)
		}
	}
	if design != nil {
		compareSequentially(*design, baseline, family)
		return best(method, results)
	}
	// Every transport against the one baseline is a family of tests: their verdicts are adjusted
	// together (Holm), so that the chance of any false one stays at 5 %.
	ratios := make([]stats.Ratio, len(family))
	errs := make([]error, len(family))
	for i, res := range family {
		ratios[i], errs[i] = ratioOf(method, baseline, res)
	}
	adjusted := stats.Holm(ratios)
	for i, res := range family {
		res.Comparison = comparison(method, baseline, res, adjusted[i], errs[i])
	}
	return best(method, results)
}

// methodOf is how runs in the order are compared. Interleaved rounds are paired: round i of every
// transport ran in the same stretch of time, so what drifted between rounds cancels in the
// round's ratio. Sequential runs have no such partner (round i of the last transport ran long
// after round i of the first), so pairing them would read the machine's drift as a difference
// of the paths, with intervals too narrow to show it; they are compared unpaired, every run of
// one side against every run of the other, whose wider interval takes in the spread between runs.
func methodOf(order benchv1.RunOrder) benchv1.ComparisonMethod {
	if order == benchv1.OrderSequential {
		return benchv1.MethodUnpaired
	}
	return benchv1.MethodPaired
}

// ratioOf is candidate's figure (tps, or MB/s for a copy) against baseline's (sweep.RatioOf).
func ratioOf(method benchv1.ComparisonMethod, baseline, candidate *benchv1.TransportResult) (stats.Ratio, error) {
	return sweep.RatioOf(method, baseline, candidate)
}

// compare is candidate against baseline alone, unadjusted.
func compare(method benchv1.ComparisonMethod, baseline, candidate *benchv1.TransportResult) *benchv1.Comparison {
	ratio, err := ratioOf(method, baseline, candidate)
	return comparison(method, baseline, candidate, ratio, err)
}

// comparison is what status says of a ratio: its estimate, interval and verdict, how it was drawn
// (sweep.Comparison) and whether it mixes placements.
func comparison(method benchv1.ComparisonMethod, baseline, candidate *benchv1.TransportResult, ratio stats.Ratio,
	err error) *benchv1.Comparison {
	out := sweep.Comparison(method, baseline.Transport, ratio, err, 0)
	if err != nil {
		return out
	}
	return withPlacements(out, baseline, candidate)
}

// withPlacements is the comparison out, marked and explained when candidate's runs and
// baseline's ran on different nodes.
func withPlacements(out *benchv1.Comparison, baseline, candidate *benchv1.TransportResult) *benchv1.Comparison {
	if b, c := placements(baseline), placements(candidate); len(b) > 0 && len(c) > 0 && !slices.Equal(b, c) {
		out.MixedPlacement = true
		out.Reason = bounded.Text(fmt.Sprintf("%s; its runs ran on %s, the baseline's on %s: the ratio mixes placements",
			out.Reason, strings.Join(c, ", "), strings.Join(b, ", ")), 1024)
	}
	return out
}

// placements are the distinct nodes a result's runs ran on, as "runner node→server node" (the
// peer's too, when there is one, which the baseline may not have: only runner and server count),
// sorted; runs whose nodes are not known are left out, and nothing known says nothing.
func placements(r *benchv1.TransportResult) []string {
	seen := map[string]bool{}
	for _, run := range r.Runs {
		if run.Node != "" && run.ServerNode != "" {
			seen[run.Node+"→"+run.ServerNode] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// best names the transport with the highest median tps, and whether its lead is real: it is
// significant when every other transport's paired interval against it lies below 1. Those whose
// interval contains 1 (or that have no interval) tie with it.
func best(method benchv1.ComparisonMethod, results []benchv1.TransportResult) *benchv1.BestTransport {
	if len(results) == 0 {
		return nil
	}
	top := &results[0]
	for i := range results {
		if figure(&results[i]) > figure(top) {
			top = &results[i]
		}
	}
	out := &benchv1.BestTransport{Transport: top.Transport, TPS: top.TPS, RoundedTPS: int64(math.Round(top.TPS))}
	if top.Copy != nil {
		out.MBPerSecond = top.Copy.MBPerSecond
	}
	ties := []string{top.Transport}
	for i := range results {
		other := &results[i]
		if other == top {
			continue
		}
		if c := compare(method, top, other); c.Verdict != benchv1.VerdictSlower {
			ties = append(ties, other.Transport)
		}
	}
	if len(ties) == 1 {
		out.Significant, out.Summary = true, top.Transport
		return out
	}
	// The top first, the others in order of their median tps.
	rest := ties[1:]
	slices.SortStableFunc(rest, func(a, b string) int { return cmp.Compare(figureOf(results, b), figureOf(results, a)) })
	out.Ties = ties
	out.Summary = fmt.Sprintf("tie: %s", strings.Join(ties, ", "))
	return out
}

func figureOf(results []benchv1.TransportResult, name string) float64 {
	for i := range results {
		if results[i].Transport == name {
			return figure(&results[i])
		}
	}
	return 0
}

func stormResult(s *report.Storm) *benchv1.ConnectionStormResult {
	out := &benchv1.ConnectionStormResult{Connections: s.Connections, FailedConnections: s.Failed,
		ConnectionsPerSecond: s.PerSecond, MeanConnectMs: s.MeanConnectMs, Command: s.Command}
	if ci := stats.MedianCI(s.BatchConnectMs); ci.Confidence > 0 {
		out.Connect = &benchv1.MedianInterval{Median: stats.Median(s.BatchConnectMs), Low: ci.Low, High: ci.High,
			Confidence: ci.Confidence, Samples: int32(len(s.BatchConnectMs))}
	}
	if s.PerSecond > 0 {
		out.TotalSeconds = float64(s.Connections+s.Failed) / s.PerSecond
		out.MeanConnectionMs = 1000 / s.PerSecond
	}
	return out
}
