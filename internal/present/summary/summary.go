// Package summary turns a TunnelBenchmark's status into the answer a person reads: per transport
// the median rate with its interval, the verdict against the baseline, latency percentiles,
// connection cost, the link asked and measured, what the path negotiated, and where it ran. The
// kubectl plugin and the demo render it (package render); nothing here talks to a cluster.
package summary

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
)

// Summary is one benchmark's answer.
type Summary struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Phase     string `json:"phase"`
	// Partial is true until the benchmark completed: the figures are those of the runs so far.
	Partial  bool   `json:"partial"`
	Progress string `json:"progress,omitempty"`
	// Failure is the Failed condition's reason and message.
	Failure       string `json:"failure,omitempty"`
	Server        string `json:"server,omitempty"`
	ServerVersion string `json:"serverVersion,omitempty"`
	// Load says what ran, e.g. "select-only, prepared, 4 clients, 10s × 3 (interleaved)".
	Load string `json:"load"`
	// Precision is where a benchmark with a precision target stands (status.precision's message).
	Precision string `json:"precision,omitempty"`
	// OpenLoop is true for a load at a fixed rate: the ratios compare mean latency, not tps.
	OpenLoop bool `json:"openLoop,omitempty"`
	// Unit is what Median measures: "tps", or "MB/s" for a copy load.
	Unit       string      `json:"unit"`
	Baseline   string      `json:"baseline,omitempty"`
	Best       string      `json:"best,omitempty"`
	Transports []Transport `json:"transports"`
	// Sweep is a swept benchmark's curves (Transports then holds names and types only).
	Sweep *Sweep `json:"sweep,omitempty"`
}

// Transport is one transport's line.
type Transport struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Runs done of Repetitions.
	Runs        int `json:"runs"`
	Repetitions int `json:"repetitions"`
	// Median of the runs' rate (Summary.Unit), with a distribution-free interval of the median
	// (IntervalConfidence: 0.95 with 6 runs or more; with fewer, the min–max's own coverage).
	Median             float64   `json:"median"`
	Low                float64   `json:"low,omitempty"`
	High               float64   `json:"high,omitempty"`
	IntervalConfidence float64   `json:"intervalConfidence,omitempty"`
	PerRun             []float64 `json:"perRun"`
	CV                 float64   `json:"cv,omitempty"`
	// Verdict against the baseline (the first transport), from the paired ratio's 95 % interval.
	Verdict string `json:"verdict,omitempty"`
	// MixedPlacement says the verdict compares runs on other nodes than the baseline's, and where.
	MixedPlacement string  `json:"mixedPlacement,omitempty"`
	Ratio          float64 `json:"ratio,omitempty"`
	RatioLow       float64 `json:"ratioLow,omitempty"`
	RatioHigh      float64 `json:"ratioHigh,omitempty"`
	// Latency in milliseconds: pgbench's average and the sampled percentiles (zero when the
	// load is a copy or was not sampled).
	LatencyAvgMs float64 `json:"latencyAvgMs,omitempty"`
	P50Ms        float64 `json:"p50Ms,omitempty"`
	P90Ms        float64 `json:"p90Ms,omitempty"`
	P99Ms        float64 `json:"p99Ms,omitempty"`
	// LatencySamples and EffectiveSamples are the logged latencies behind the percentiles and what
	// they are worth weighted; Unsupported names the percentiles too few of them support.
	LatencySamples int64 `json:"latencySamples,omitempty"`
	// OpenLoop says how an open-loop transport kept its schedule over its runs, e.g. "schedule lag
	// 0.14 ms (max 3.85), 0 skipped, 12 late of 4632".
	OpenLoop         string   `json:"openLoop,omitempty"`
	EffectiveSamples int64    `json:"effectiveSamples,omitempty"`
	Unsupported      []string `json:"unsupported,omitempty"`
	// ConnectionCost answers "what does a new connection cost me" in milliseconds: one
	// connection's setup through the path, from the best measurement the load made
	// (ConnectionCostFrom, see ConnectionCostOf). Never pgbench's initial connection time, which is
	// ClientsStartup.
	ConnectionCost     *Estimate `json:"connectionCost,omitempty"`
	ConnectionCostFrom string    `json:"connectionCostFrom,omitempty"`
	// ClientsStartup is pgbench's "initial connection time" (ms): how long the clients took to
	// connect before the load began, each thread opening its clients one after another. It grows
	// with clients per thread and is not what one connection costs.
	ClientsStartup *Estimate `json:"clientsStartup,omitempty"`
	// New connections per second (reconnect) and a storm's rate, when measured.
	// RatioLevel is the confidence level of Ratio's interval: 0.95, or higher when Holm-adjusted.
	RatioLevel           float64  `json:"ratioLevel,omitempty"`
	ConnectionsPerSecond *float64 `json:"connectionsPerSecond,omitempty"`
	StormPerSecond       *float64 `json:"stormPerSecond,omitempty"`
	// StormConnect is the storm's time to connect (ms): the median of its batches' means with
	// their interval.
	StormConnect       *Estimate `json:"stormConnect,omitempty"`
	FailedTransactions int64     `json:"failedTransactions,omitempty"`
	// Link is the emulated link, asked and measured ("" on the LAN).
	Link string `json:"link,omitempty"`
	// Path is what the path negotiated and how it was built, in its transport's words.
	Path string `json:"path,omitempty"`
	// Evidence is what the path's own parts counted (a tunnel's bytes, a proxy's connections), as
	// "name: value".
	Evidence []string `json:"evidence,omitempty"`
	// Series is tps over time per run (seconds since the run's start), for plots.
	Series []Series `json:"series,omitempty"`
	// Cost is each measured part's CPU per transaction (µs), and Limiter what ran out in how many
	// of the measured runs.
	Cost    []PartCost `json:"cost,omitempty"`
	Limiter string     `json:"limiter,omitempty"`
	// Budget is where the round trip went, the median over the runs that have a budget.
	Budget *Budget `json:"budget,omitempty"`
	// Unmeasured are the parts whose CPU some runs could not measure: how many, and the first
	// run's reason.
	Unmeasured []Unmeasured `json:"unmeasured,omitempty"`
	// Wire is the bytes on the network per transaction (or row).
	Wire *Wire `json:"wire,omitempty"`
	// Setup is a new connection's setup, phase by phase.
	Setup *Setup `json:"setup,omitempty"`
	// Where it ran.
	Node           string `json:"node,omitempty"`
	RunnerImage    string `json:"runnerImage,omitempty"`
	PgbenchVersion string `json:"pgbenchVersion,omitempty"`
}

// Where a transport's connection cost comes from, best first.
const (
	// CostFromReconnect: spec.load.reconnect, a new connection for every transaction under load;
	// pgbench's average connection time over the runs.
	CostFromReconnect = "reconnect"
	// CostFromStorm: spec.load.connectionStorm, sequential connect, select 1, disconnect cycles in
	// batches; the median of the batches' mean connect times.
	CostFromStorm = "storm"
	// CostFromSetupProbe: the runner's own probe before each run (resolve, TCP, TLS, startup),
	// a few connections; the median of the runs' medians, without an interval.
	CostFromSetupProbe = "setup probe"
)

// ConnectionCostOf is one new connection's cost (ms) and where it comes from: the reconnect load's
// average connection time when it ran (many connections under load, with an interval over runs),
// else the storm's connect time, else the setup probe's total; nil when none measured it.
func ConnectionCostOf(reconnect, storm *Estimate, setup *Setup) (*Estimate, string) {
	switch {
	case reconnect != nil:
		return reconnect, CostFromReconnect
	case storm != nil:
		return storm, CostFromStorm
	case setup != nil && setup.TotalMs > 0:
		return &Estimate{Median: setup.TotalMs, Runs: setup.Runs}, CostFromSetupProbe
	}
	return nil, ""
}

// Series is one run's tps over time.
type Series struct {
	Round   int32     `json:"round"`
	Seconds []float64 `json:"seconds"`
	TPS     []float64 `json:"tps"`
}

// Of summarizes a benchmark.
func Of(tb *benchv1.TunnelBenchmark) Summary {
	s := Summary{
		Namespace: tb.Namespace, Name: tb.Name, Phase: string(tb.Status.Phase),
		Partial:  tb.Status.Phase != benchv1.PhaseCompleted,
		Progress: tb.Status.Progress, Server: tb.Status.Server, ServerVersion: tb.Status.ServerVersion,
		Load: loadOf(tb), Precision: precisionOf(tb), OpenLoop: tb.Spec.Load.Rate != nil, Unit: "tps",
	}
	if tb.Spec.Load.Copy != nil {
		s.Unit = "MB/s"
	}
	if c := meta.FindStatusCondition(tb.Status.Conditions, conditions.Failed); c != nil && c.Status == "True" {
		s.Failure = c.Reason + ": " + c.Message
	}
	if len(tb.Spec.Transports) > 0 {
		s.Baseline = tb.Spec.Transports[0].Name
	}
	if b := tb.Status.Best; b != nil {
		s.Best = b.Summary
	}
	s.Sweep = sweepOf(tb)
	// Spec order, so that a transport not yet run shows as such.
	for _, t := range tb.Spec.Transports {
		line := Transport{Name: t.Name, Type: string(t.Type), Repetitions: int(tb.Rounds())}
		if r := tb.Status.Result(t.Name); r != nil {
			fill(&line, r, s.Unit, tb.Spec.Load.Reconnect)
		}
		s.Transports = append(s.Transports, line)
	}
	return s
}

func fill(line *Transport, r *benchv1.TransportResult, unit string, reconnect bool) {
	line.Runs = len(r.Runs)
	for _, run := range r.Runs {
		v := run.TPS
		if unit == "MB/s" && run.MBPerSecond != nil {
			v = *run.MBPerSecond
		}
		line.PerRun = append(line.PerRun, v)
	}
	sum := stats.Summarize(line.PerRun)
	line.Median, line.CV = sum.Median, sum.CV
	if ci := stats.MedianCI(line.PerRun); ci.Confidence > 0 {
		line.Low, line.High, line.IntervalConfidence = ci.Low, ci.High, ci.Confidence
	}
	if c := r.Comparison; c != nil {
		line.Verdict, line.Ratio = string(c.Verdict), c.Ratio
		if c.MixedPlacement {
			line.MixedPlacement = c.Reason
		}
		if c.Lower != nil && c.Upper != nil {
			line.RatioLow, line.RatioHigh, line.RatioLevel = *c.Lower, *c.Upper, c.Level
		}
	}
	line.LatencyAvgMs, line.FailedTransactions = r.LatencyAvgMs, r.FailedTransactions
	var connect []float64
	for _, run := range r.Runs {
		if run.ConnectionTimeMs > 0 {
			connect = append(connect, run.ConnectionTimeMs)
		}
	}
	perConnection := estimate(connect)
	if !reconnect {
		line.ClientsStartup, perConnection = perConnection, nil
	}
	if l := r.Latency; l != nil {
		line.P50Ms, line.P90Ms, line.P99Ms = l.P50Ms, ptr.Deref(l.P90Ms, 0), ptr.Deref(l.P99Ms, 0)
		line.LatencySamples, line.EffectiveSamples, line.Unsupported = l.Samples, l.EffectiveSamples, l.Unsupported
	}
	line.ConnectionsPerSecond = r.ConnectionsPerSecond
	if st := r.ConnectionStorm; st != nil {
		line.StormPerSecond = &st.ConnectionsPerSecond
		if c := st.Connect; c != nil {
			line.StormConnect = &Estimate{Median: c.Median, Low: c.Low, High: c.High, IntervalConfidence: c.Confidence,
				Runs: int(c.Samples)}
		}
	}
	line.Link = linkOf(r.Link)
	line.Path = r.Path
	for _, e := range r.Evidence {
		line.Evidence = append(line.Evidence, e.Name+": "+e.Value)
	}
	line.Cost, line.Limiter = costOf(r.Runs)
	line.Unmeasured = unmeasuredOf(r.Runs)
	line.Budget = BudgetOf(r.Runs)
	line.Wire = wireOf(r.Runs)
	line.OpenLoop = openLoopOf(r.Runs)
	line.Setup = setupOf(r.Runs)
	line.ConnectionCost, line.ConnectionCostFrom = ConnectionCostOf(perConnection, line.StormConnect, line.Setup)
	for _, s := range r.Series {
		line.Series = append(line.Series, Series{Round: s.Round, Seconds: s.Seconds, TPS: s.TPS})
	}
	if p := r.Provenance; p != nil {
		line.Node, line.RunnerImage, line.PgbenchVersion = p.Node, p.RunnerImage, p.PgbenchVersion
	}
}

// openLoopOf sums up how the runs kept their schedule: the worst mean lag and the longest lag of
// any run, the skipped and late transactions of all.
func openLoopOf(runs []benchv1.RunResult) string {
	var lag, lagMax float64
	var skipped, late, all int64
	lateKnown, any := false, false
	for _, r := range runs {
		o := r.OpenLoop
		if o == nil {
			continue
		}
		any = true
		lag, lagMax = max(lag, o.ScheduleLagMs), max(lagMax, o.ScheduleLagMaxMs)
		skipped += o.Skipped
		all += r.Transactions + r.FailedTransactions + o.Skipped
		if o.Late != nil {
			lateKnown, late = true, late+*o.Late
		}
	}
	if !any {
		return ""
	}
	out := fmt.Sprintf("schedule lag up to %.3g ms on average in a run (max %.3g ms), %d of %d scheduled skipped", lag, lagMax,
		skipped, all)
	if lateKnown {
		out += fmt.Sprintf(", %d late", late)
	}
	return out
}

// precisionOf says where a benchmark with a precision target stands, or nothing without one.
func precisionOf(tb *benchv1.TunnelBenchmark) string {
	if p := tb.Status.Precision; p != nil {
		return p.Message
	}
	return ""
}

// loadOf says what the benchmark ran.
func loadOf(tb *benchv1.TunnelBenchmark) string {
	l := tb.Spec.Load
	count := fmt.Sprint(tb.Repetitions())
	if l.Precision != nil {
		count = fmt.Sprintf("at most %d", tb.Repetitions())
		if p := tb.Status.Precision; p != nil && p.StoppedAfter > 0 {
			count = fmt.Sprintf("%d of at most %d", p.StoppedAfter, tb.Repetitions())
		}
	}
	reps := fmt.Sprintf("× %s (%s)", count, tb.Order())
	if o := tb.Status.RunOrder; o != nil {
		reps = fmt.Sprintf("× %s (%s, random order, seed %d)", count, o.Order, o.Seed)
	}
	if c := l.Copy; c != nil {
		return fmt.Sprintf("copy of %s of %s data %s", c.Size.String(), c.Data, reps)
	}
	what := string(l.Builtin)
	if what == "" {
		what = "script"
	}
	parts := []string{what}
	if l.Protocol != "" {
		parts = append(parts, string(l.Protocol))
	}
	switch param, values := tb.Spec.Sweep.Parameter(); param {
	case benchv1.SweepClients:
		parts = append(parts, "clients swept over "+joinValues(values))
	case benchv1.SweepTunnels:
		parts = append(parts, fmt.Sprintf("%d clients", l.Clients), "ssh tunnels swept over "+joinValues(values))
	case benchv1.SweepPoolSize:
		parts = append(parts, fmt.Sprintf("%d clients", l.Clients), "pooler pool size swept over "+joinValues(values))
	default:
		parts = append(parts, fmt.Sprintf("%d clients", l.Clients))
	}
	if l.Reconnect {
		parts = append(parts, "reconnect")
	}
	if l.Rate != nil {
		loop := fmt.Sprintf("open loop at %d tps", *l.Rate)
		if l.LatencyLimit != nil {
			loop += fmt.Sprintf(", latency limit %s", l.LatencyLimit.Duration)
		}
		parts = append(parts, loop)
	}
	switch {
	case l.Duration != nil:
		parts = append(parts, fmt.Sprintf("%s %s", l.Duration.Round(time.Second), reps))
	case l.Transactions != nil:
		parts = append(parts, fmt.Sprintf("%d transactions %s", *l.Transactions, reps))
	default:
		parts = append(parts, reps)
	}
	return strings.Join(parts, ", ")
}

func joinValues(values []int32) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = fmt.Sprint(v)
	}
	return strings.Join(out, ", ")
}

// linkOf renders the link asked and measured: "asked 10ms 50Mbit/s, measured 10.9ms 49.4Mbit/s".
func linkOf(l *benchv1.LinkResult) string {
	if l == nil {
		return ""
	}
	out := fmt.Sprintf("%s: asked %s", l.Emulator, figures(l.Asked.RTTMs, l.Asked.BitsPerSecond))
	if m := l.Measured; m != nil {
		out += ", measured " + figures(m.RTTMs, m.BitsPerSecond)
	}
	return out
}

func figures(rttMs float64, bps int64) string {
	var parts []string
	if rttMs > 0 {
		parts = append(parts, fmt.Sprintf("%.3gms", rttMs))
	}
	if bps > 0 {
		parts = append(parts, fmt.Sprintf("%.3gMbit/s", float64(bps)/1e6))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// Estimate is a figure over a transport's runs: their median with its distribution-free interval
// (IntervalConfidence: 0.95 with 6 runs or more; with fewer, the min–max's own coverage; 0 with
// one run).
type Estimate struct {
	Median             float64 `json:"median"`
	Low                float64 `json:"low,omitempty"`
	High               float64 `json:"high,omitempty"`
	IntervalConfidence float64 `json:"intervalConfidence,omitempty"`
	Runs               int     `json:"runs"`
}

// estimate is the Estimate of values, nil without any.
func estimate(values []float64) *Estimate {
	if len(values) == 0 {
		return nil
	}
	out := &Estimate{Median: stats.Summarize(values).Median, Runs: len(values)}
	if ci := stats.MedianCI(values); ci.Confidence > 0 {
		out.Low, out.High, out.IntervalConfidence = ci.Low, ci.High, ci.Confidence
	}
	return out
}
