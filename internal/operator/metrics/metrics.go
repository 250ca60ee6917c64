// Package metrics publishes benchmark results as Prometheus gauges in controller-runtime's
// registry, so they are served by the operator's (authenticated) metrics endpoint.
package metrics

import (
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

const namespace = "tunnelbench"

var transportLabels = []string{"namespace", "benchmark", "transport"}

// Recorder owns the TunnelBench gauges. Its methods are safe for concurrent use.
type Recorder struct {
	tps            *prometheus.GaugeVec
	latencyAvg     *prometheus.GaugeVec
	latencyStddev  *prometheus.GaugeVec
	connectionTime *prometheus.GaugeVec
	connectionCost *prometheus.GaugeVec
	failed         *prometheus.GaugeVec
	transactions   *prometheus.GaugeVec
	connections    *prometheus.GaugeVec
	stormRate      *prometheus.GaugeVec
	stormCycle     *prometheus.GaugeVec
	tpsCV          *prometheus.GaugeVec
	latencyQuant   *prometheus.GaugeVec
	ratio          *prometheus.GaugeVec
	copyRate       *prometheus.GaugeVec
	liveTPS        *prometheus.GaugeVec
	linkRTT        *prometheus.GaugeVec
	linkBandwidth  *prometheus.GaugeVec
	failedBench    *prometheus.GaugeVec
	benchPhase     *prometheus.GaugeVec
	benchmarks     *prometheus.GaugeVec
	cpuPerTx       *prometheus.GaugeVec
	roundTrip      *prometheus.GaugeVec
	wireBytes      *prometheus.GaugeVec
	limitedRuns    *prometheus.GaugeVec
	scheduleLag    *prometheus.GaugeVec
	skipped        *prometheus.GaugeVec
	unsteadyRuns   *prometheus.GaugeVec
	sweepTPS       *prometheus.GaugeVec
	sweepLatency   *prometheus.GaugeVec
	sweepKnee      *prometheus.GaugeVec

	mu     sync.Mutex
	phases map[string]benchv1.Phase // namespace/name → phase
}

// NewRecorder creates the gauges and registers them with reg.
func NewRecorder(reg prometheus.Registerer) *Recorder {
	gauge := func(name, help string, labels []string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}, labels)
	}
	r := &Recorder{
		tps:        gauge("transport_tps", "Transactions per second measured through a transport.", transportLabels),
		latencyAvg: gauge("transport_latency_average_seconds", "Average transaction latency through a transport.", transportLabels),
		latencyStddev: gauge("transport_latency_stddev_seconds",
			"Standard deviation of the transaction latency through a transport.", transportLabels),
		connectionTime: gauge("transport_connection_time_seconds",
			"pgbench's initial connection time (every client connecting before the load, not one connection's cost), "+
				"or with reconnect its average connection time, through a transport.", transportLabels),
		connectionCost: gauge("transport_connection_cost_seconds",
			"One new connection's cost through a transport, from the best measurement the load made "+
				"(from: reconnect, storm or setup probe).", append(slices.Clone(transportLabels), "from")),
		failed:       gauge("transport_failed_transactions", "Transactions that ended in an error through a transport.", transportLabels),
		transactions: gauge("transport_transactions", "Transactions processed through a transport.", transportLabels),
		connections: gauge("transport_connections_per_second",
			"With reconnect, connections opened per second through a transport (one per transaction).", transportLabels),
		stormRate: gauge("transport_storm_connections_per_second",
			"Connection storm: sequential connect, select 1, disconnect cycles per second through a transport.", transportLabels),
		stormCycle: gauge("transport_storm_connection_seconds",
			"Connection storm: mean time of one connect, select 1, disconnect cycle through a transport.", transportLabels),
		tpsCV: gauge("transport_tps_coefficient_of_variation",
			"Spread of tps over a transport's repetitions: sample standard deviation over mean.", transportLabels),
		latencyQuant: gauge("transport_latency_seconds",
			"Transaction latency quantiles through a transport, over every repetition (merged HDR histograms).",
			append(transportLabels[:3:3], "quantile")),
		ratio: gauge("transport_tps_ratio",
			"A transport's tps over the baseline's (geometric mean of paired rounds), with its 95 % interval's bounds.",
			append(transportLabels[:3:3], "bound")),
		copyRate: gauge("transport_copy_bytes_per_second",
			"Bytes per second of a copy load through a transport (median over the repetitions).", transportLabels[:3:3]),
		liveTPS: gauge("transport_live_tps",
			"tps of the running run's latest progress report (pgbench -P), while its measured load runs: live, not replayed.",
			transportLabels),
		linkRTT: gauge("transport_link_rtt_seconds",
			"An emulated link's round-trip time, as asked and as the runner measured it (median over the runs).",
			append(transportLabels[:3:3], "figure")),
		linkBandwidth: gauge("transport_link_bits_per_second",
			"An emulated link's bandwidth, as asked and as the runner measured it (median over the runs).",
			append(transportLabels[:3:3], "figure")),
		cpuPerTx: gauge("transport_cpu_seconds_per_transaction",
			"CPU time per transaction of each part of a transport's path (client, a sidecar), from its cgroup, median over the runs.",
			append(transportLabels[:3:3], "part")),
		roundTrip: gauge("transport_round_trip_seconds", "A closed-loop transport's round trip (clients / tps, part=\"total\") "+
			"and each measured part's share of it, the rest in no part (part=\"unattributed\"), median over the runs.",
			append(transportLabels[:3:3], "part")),
		wireBytes: gauge("transport_wire_bytes",
			"Bytes a transport's path put on the network from the runner's pod, both directions, per transaction or per row "+
				"of a copy (label per), median over the runs.",
			append(transportLabels[:3:3], "per")),
		scheduleLag: gauge("transport_schedule_lag_seconds",
			"How late an open-loop transport's transactions started against their schedule: the median over the runs of "+
				"each run's mean (figure mean), and the longest of any run (figure max).",
			append(transportLabels[:3:3], "figure")),
		skipped: gauge("transport_skipped_transactions",
			"Transactions an open-loop transport skipped, spec.load.latencyLimit behind their schedule, over all its runs.",
			transportLabels),
		unsteadyRuns: gauge("transport_unsteady_runs",
			"Runs of a transport whose tps trended while it was measured (NotSteady).", transportLabels),
		limitedRuns: gauge("transport_limited_runs",
			"Runs of a transport that a part (client, a sidecar, network) limited, by the documented thresholds.",
			append(transportLabels[:3:3], "part")),
		sweepTPS: gauge("sweep_tps",
			"A swept transport's tps at each point (label value of parameter): the median of the point's runs and its "+
				"distribution-free interval's bounds (label bound).",
			append(transportLabels[:3:3], "parameter", "value", "bound")),
		sweepLatency: gauge("sweep_latency_seconds",
			"A swept transport's latency at each point: p50 and p99 of the point's merged histograms, where supported.",
			append(transportLabels[:3:3], "parameter", "value", "quantile")),
		sweepKnee: gauge("sweep_knee",
			"The value of the swept parameter at a transport's knee: the last point whose gain over the previous one "+
				"lies beyond 5 %; saturated=\"false\" when it is the last point (the knee lies beyond the sweep).",
			append(transportLabels[:3:3], "parameter", "saturated")),
		failedBench: gauge("benchmark_failed", "1 for a benchmark that failed, with the Failed condition's reason.",
			[]string{"namespace", "benchmark", "reason"}),
		benchPhase: gauge("benchmark_phase", "1 for each benchmark, labelled with its phase.",
			[]string{"namespace", "benchmark", "phase"}),
		benchmarks: gauge("benchmarks", "TunnelBenchmarks by phase.", []string{"phase"}),
		phases:     map[string]benchv1.Phase{},
	}
	reg.MustRegister(r.series()...)
	reg.MustRegister(r.benchmarks)
	return r
}

// Default is the recorder registered with controller-runtime's registry.
var Default = NewRecorder(metrics.Registry)

// Observe publishes a benchmark's phase and every result it holds.
func (r *Recorder) Observe(tb *benchv1.TunnelBenchmark) {
	for _, res := range tb.Status.Unswept() {
		labels := prometheus.Labels{"namespace": tb.Namespace, "benchmark": tb.Name, "transport": res.Transport}
		if res.Copy != nil {
			// A copy load has no transactions: its figure has its own series.
			r.copyRate.With(labels).Set(res.Copy.MBPerSecond * 1e6)
			r.observeWire(labels, res.Runs)
			continue
		}
		r.tps.With(labels).Set(res.TPS)
		r.latencyAvg.With(labels).Set(res.LatencyAvgMs / 1000)
		if res.LatencyStddevMs != nil {
			r.latencyStddev.With(labels).Set(*res.LatencyStddevMs / 1000)
		}
		r.connectionTime.With(labels).Set(res.ConnectionTimeMs / 1000)
		r.failed.With(labels).Set(float64(res.FailedTransactions))
		r.transactions.With(labels).Set(float64(res.Transactions))
		if res.ConnectionsPerSecond != nil {
			r.connections.With(labels).Set(*res.ConnectionsPerSecond)
		}
		if s := res.ConnectionStorm; s != nil {
			r.stormRate.With(labels).Set(s.ConnectionsPerSecond)
			r.stormCycle.With(labels).Set(s.MeanConnectionMs / 1000)
		}
		if s := res.TPSSpread; s != nil && s.CV != nil {
			r.tpsCV.With(labels).Set(*s.CV)
		}
		if l := res.Latency; l != nil {
			// A percentile too few samples support has no series rather than a figure.
			for q, ms := range map[string]*float64{"0.5": &l.P50Ms, "0.9": l.P90Ms, "0.99": l.P99Ms, "0.999": l.P999Ms, "1": &l.MaxMs} {
				if ms != nil {
					r.latencyQuant.With(with(labels, "quantile", q)).Set(*ms / 1000)
				}
			}
		}
		if l := res.Link; l != nil {
			r.linkRTT.With(with(labels, "figure", "asked")).Set(l.Asked.RTTMs / 1000)
			r.linkBandwidth.With(with(labels, "figure", "asked")).Set(float64(l.Asked.BitsPerSecond))
			if m := l.Measured; m != nil {
				r.linkRTT.With(with(labels, "figure", "measured")).Set(m.RTTMs / 1000)
				r.linkBandwidth.With(with(labels, "figure", "measured")).Set(float64(m.BitsPerSecond))
			}
		}
		r.observeCost(labels, res.Runs)
		r.observeSchedule(labels, res.Runs)
		if c := res.Comparison; c != nil && c.Ratio > 0 {
			r.ratio.With(with(labels, "bound", "estimate")).Set(c.Ratio)
			if c.Lower != nil && c.Upper != nil {
				r.ratio.With(with(labels, "bound", "lower")).Set(*c.Lower)
				r.ratio.With(with(labels, "bound", "upper")).Set(*c.Upper)
			}
		}
	}
	r.observeConnectionCost(tb)
	r.observeSweep(tb)
	r.benchPhase.DeletePartialMatch(prometheus.Labels{"namespace": tb.Namespace, "benchmark": tb.Name})
	if tb.Status.Phase != "" {
		r.benchPhase.With(prometheus.Labels{"namespace": tb.Namespace, "benchmark": tb.Name, "phase": string(tb.Status.Phase)}).Set(1)
	}
	r.failedBench.DeletePartialMatch(prometheus.Labels{"namespace": tb.Namespace, "benchmark": tb.Name})
	if c := meta.FindStatusCondition(tb.Status.Conditions, conditions.Failed); tb.Status.Phase == benchv1.PhaseFailed && c != nil {
		r.failedBench.With(prometheus.Labels{"namespace": tb.Namespace, "benchmark": tb.Name, "reason": c.Reason}).Set(1)
	}
	// One series at most per benchmark, the running transport's, and none between runs.
	r.liveTPS.DeletePartialMatch(prometheus.Labels{"namespace": tb.Namespace, "benchmark": tb.Name})
	if l := tb.Status.Live; l != nil && l.Phase == runspec.LiveLoad {
		r.liveTPS.With(prometheus.Labels{"namespace": tb.Namespace, "benchmark": tb.Name, "transport": l.Transport}).Set(l.TPS)
	}
	r.setPhase(tb.Namespace+"/"+tb.Name, tb.Status.Phase)
}

// Forget removes every series of a deleted benchmark.
func (r *Recorder) Forget(namespace, name string) {
	match := prometheus.Labels{"namespace": namespace, "benchmark": name}
	for _, c := range r.series() {
		c.(*prometheus.GaugeVec).DeletePartialMatch(match)
	}
	r.setPhase(namespace+"/"+name, "")
}

// series are the per-transport gauges.
func (r *Recorder) series() []prometheus.Collector {
	return []prometheus.Collector{r.tps, r.latencyAvg, r.latencyStddev, r.connectionTime, r.connectionCost, r.failed, r.transactions,
		r.connections, r.stormRate, r.stormCycle, r.tpsCV, r.latencyQuant, r.ratio, r.copyRate, r.liveTPS, r.linkRTT,
		r.linkBandwidth, r.failedBench, r.benchPhase, r.cpuPerTx, r.roundTrip, r.wireBytes, r.limitedRuns, r.scheduleLag, r.skipped,
		r.unsteadyRuns, r.sweepTPS, r.sweepLatency, r.sweepKnee}
}

// observeConnectionCost publishes each transport's connection cost as the report shows it
// (summary.ConnectionCostOf), one series per transport labelled with where it comes from.
func (r *Recorder) observeConnectionCost(tb *benchv1.TunnelBenchmark) {
	r.connectionCost.DeletePartialMatch(prometheus.Labels{"namespace": tb.Namespace, "benchmark": tb.Name})
	for _, t := range summary.Of(tb).Transports {
		if c := t.ConnectionCost; c != nil {
			r.connectionCost.With(prometheus.Labels{"namespace": tb.Namespace, "benchmark": tb.Name, "transport": t.Name,
				"from": t.ConnectionCostFrom}).Set(c.Median / 1000)
		}
	}
}

// observeSweep publishes a sweep's curves: each point's tps with its interval and its latency,
// and each transport's knee.
func (r *Recorder) observeSweep(tb *benchv1.TunnelBenchmark) {
	sw := tb.Status.Sweep
	if sw == nil {
		return
	}
	for _, c := range sw.Curves {
		labels := prometheus.Labels{"namespace": tb.Namespace, "benchmark": tb.Name, "transport": c.Transport,
			"parameter": string(sw.Parameter)}
		for _, p := range c.Points {
			at := with(labels, "value", strconv.Itoa(int(p.Value)))
			r.sweepTPS.With(with(at, "bound", "median")).Set(p.TPS)
			if p.TPSLow != nil && p.TPSHigh != nil {
				r.sweepTPS.With(with(at, "bound", "lower")).Set(*p.TPSLow)
				r.sweepTPS.With(with(at, "bound", "upper")).Set(*p.TPSHigh)
			}
			for q, ms := range map[string]*float64{"0.5": p.P50Ms, "0.99": p.P99Ms} {
				if ms != nil {
					r.sweepLatency.With(with(at, "quantile", q)).Set(*ms / 1000)
				}
			}
		}
		r.sweepKnee.DeletePartialMatch(labels)
		if c.Knee != nil {
			r.sweepKnee.With(with(labels, "saturated", strconv.FormatBool(c.Saturated))).Set(float64(*c.Knee))
		}
	}
}

// observeCost publishes each measured part's CPU per transaction (the median over the runs) and
// how many runs each limiter limited.
func (r *Recorder) observeCost(labels prometheus.Labels, runs []benchv1.RunResult) {
	perPart := map[string][]float64{}
	limited := map[string]float64{}
	for _, run := range runs {
		for _, c := range run.Cost {
			if c.CPUMicrosPerTransaction != nil {
				perPart[c.Part] = append(perPart[c.Part], *c.CPUMicrosPerTransaction/1e6)
			}
		}
		if run.Limiter != nil {
			limited[run.Limiter.Part]++
		}
	}
	for part, values := range perPart {
		r.cpuPerTx.With(with(labels, "part", part)).Set(stats.Median(values))
	}
	for part, n := range limited {
		r.limitedRuns.With(with(labels, "part", part)).Set(n)
	}
	if b := summary.BudgetOf(runs); b != nil {
		r.roundTrip.With(with(labels, "part", "total")).Set(b.RoundTripMs / 1000)
		r.roundTrip.With(with(labels, "part", "unattributed")).Set(b.UnattributedMs / 1000)
		for _, p := range b.Parts {
			r.roundTrip.With(with(labels, "part", p.Part)).Set(p.Ms / 1000)
		}
	}
	r.observeWire(labels, runs)
}

// observeWire publishes the runs' median bytes on the wire per transaction, or per row of a copy.
func (r *Recorder) observeWire(labels prometheus.Labels, runs []benchv1.RunResult) {
	perTx, perRow := []float64{}, []float64{}
	for _, run := range runs {
		if w := run.Wire; w != nil && w.BytesPerTransaction != nil {
			perTx = append(perTx, *w.BytesPerTransaction)
		} else if w != nil && w.BytesPerRow != nil {
			perRow = append(perRow, *w.BytesPerRow)
		}
	}
	if len(perTx) > 0 {
		r.wireBytes.With(with(labels, "per", "transaction")).Set(stats.Median(perTx))
	}
	if len(perRow) > 0 {
		r.wireBytes.With(with(labels, "per", "row")).Set(stats.Median(perRow))
	}
}

// observeSchedule publishes how open-loop runs kept their schedule, and how many runs trended.
func (r *Recorder) observeSchedule(labels prometheus.Labels, runs []benchv1.RunResult) {
	var lags []float64
	var longest, skipped, unsteady float64
	for _, run := range runs {
		if o := run.OpenLoop; o != nil {
			lags = append(lags, o.ScheduleLagMs/1000)
			longest = max(longest, o.ScheduleLagMaxMs/1000)
			skipped += float64(o.Skipped)
		}
		if s := run.Steadiness; s != nil && !s.Steady {
			unsteady++
		}
	}
	if len(lags) > 0 {
		r.scheduleLag.With(with(labels, "figure", "mean")).Set(stats.Median(lags))
		r.scheduleLag.With(with(labels, "figure", "max")).Set(longest)
		r.skipped.With(labels).Set(skipped)
	}
	r.unsteadyRuns.With(labels).Set(unsteady)
}

// with is labels plus one more.
func with(labels prometheus.Labels, name, value string) prometheus.Labels {
	out := prometheus.Labels{name: value}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// setPhase records a benchmark's phase ("" to drop it) and recounts the phase gauge.
func (r *Recorder) setPhase(key string, phase benchv1.Phase) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if phase == "" {
		delete(r.phases, key)
	} else {
		r.phases[key] = phase
	}
	counts := map[benchv1.Phase]float64{}
	for _, p := range r.phases {
		counts[p]++
	}
	for _, p := range []benchv1.Phase{benchv1.PhaseQueued, benchv1.PhasePending, benchv1.PhaseInitializing, benchv1.PhaseRunning,
		benchv1.PhaseCompleted, benchv1.PhaseFailed, benchv1.PhaseCancelled} {
		r.benchmarks.WithLabelValues(string(p)).Set(counts[p])
	}
}

// Describe sends the descriptions of every series the recorder exports (prometheus.Collector's
// half), for tests that check dashboards and rules against them.
func (r *Recorder) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range append(r.series(), r.benchmarks) {
		c.Describe(ch)
	}
}
