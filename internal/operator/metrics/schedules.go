package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

var scheduleLabels = []string{"namespace", "schedule", "transport", "figure"}

// ScheduleRecorder owns the gauges of ScheduledTunnelBenchmarks: each transport's newest judged
// figure and whether it regressed. Its methods are safe for concurrent use.
type ScheduleRecorder struct {
	regressed *prometheus.GaugeVec
	change    *prometheus.GaugeVec
	value     *prometheus.GaugeVec
	skipped   *prometheus.GaugeVec
}

// NewScheduleRecorder creates the gauges and registers them with reg.
func NewScheduleRecorder(reg prometheus.Registerer) *ScheduleRecorder {
	gauge := func(name, help string, labels []string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}, labels)
	}
	r := &ScheduleRecorder{
		regressed: gauge("schedule_regressed",
			"1 when a schedule's newest result of a transport's figure (ratio, tps, latency, throughput) regressed "+
				"against the schedule's history (beyond its 99 % prediction band by at least the minimum effect), else 0.",
			scheduleLabels),
		change: gauge("schedule_change_ratio",
			"A schedule's newest result of a transport's figure over the level of its earlier results, minus 1.", scheduleLabels),
		value: gauge("schedule_figure", "A schedule's newest result of a transport's figure.", scheduleLabels),
		skipped: gauge("schedule_skipped_runs", "Runs a schedule skipped: due while the previous ran, or missed.",
			[]string{"namespace", "schedule"}),
	}
	reg.MustRegister(r.regressed, r.change, r.value, r.skipped)
	return r
}

// DefaultSchedules is the schedule recorder registered with controller-runtime's registry.
var DefaultSchedules = NewScheduleRecorder(metrics.Registry)

// Observe publishes a schedule's newest judgement, replacing the previous one's series.
func (r *ScheduleRecorder) Observe(stb *benchv1.ScheduledTunnelBenchmark) {
	r.Forget(stb.Namespace, stb.Name)
	r.skipped.WithLabelValues(stb.Namespace, stb.Name).Set(float64(stb.Status.Skipped))
	for _, j := range stb.Status.Latest {
		labels := prometheus.Labels{"namespace": stb.Namespace, "schedule": stb.Name, "transport": j.Transport, "figure": j.Figure}
		r.value.With(labels).Set(j.After.Value)
		if j.Before == nil {
			continue
		}
		regressed := 0.0
		if j.Regressed {
			regressed = 1
		}
		r.regressed.With(labels).Set(regressed)
		r.change.With(labels).Set(j.After.Value/j.Before.Level - 1)
	}
}

// Forget removes every series of a schedule.
func (r *ScheduleRecorder) Forget(namespace, name string) {
	match := prometheus.Labels{"namespace": namespace, "schedule": name}
	for _, g := range []*prometheus.GaugeVec{r.regressed, r.change, r.value, r.skipped} {
		g.DeletePartialMatch(match)
	}
}

// Describe sends the descriptions of the schedules' gauges.
func (r *ScheduleRecorder) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range []*prometheus.GaugeVec{r.regressed, r.change, r.value, r.skipped} {
		g.Describe(ch)
	}
}
