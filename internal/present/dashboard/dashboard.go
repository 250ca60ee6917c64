// Package dashboard builds TunnelBench's Grafana dashboard with the Grafana Foundation SDK, so that
// its JSON is right by construction: variables for the namespace, the benchmark and the
// transports, and panels for tps per transport with the ratio's interval, latency percentiles,
// live tps, connection cost and the link as measured. hack/dashboard writes it into the chart
// (files/dashboards), which ships it as a ConfigMap for kube-prometheus-stack's Grafana sidecar.
package dashboard

import (
	"encoding/json"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// UID is the dashboard's uid: stable, so that links to it survive upgrades.
const UID = "tunnelbench"

// Selector is the label matcher every per-transport query carries; its variables are the
// dashboard's. Tests substitute them to evaluate the queries.
const Selector = `namespace=~"$namespace",benchmark=~"$benchmark",transport=~"$transport"`

// Panel is one panel's title and PromQL queries, for tests that evaluate them.
type Panel struct {
	Title   string
	Queries []string
}

// Panels are the dashboard's panels and their queries, in order.
func Panels() []Panel {
	var out []Panel
	for _, p := range panels() {
		out = append(out, Panel{Title: p.title, Queries: p.exprs()})
	}
	return out
}

type panel struct {
	title, unit, kind string // kind: bars, series or stat
	width, height     uint32
	queries           []query
	description       string
}

type query struct{ expr, legend string }

func (p panel) exprs() []string {
	var out []string
	for _, q := range p.queries {
		out = append(out, q.expr)
	}
	return out
}

func sel(metric string, extra ...string) string {
	return metric + "{" + strings.Join(append([]string{Selector}, extra...), ",") + "}"
}

// panels are the dashboard's panels: one place for their queries, used by the builder and the tests.
func panels() []panel {
	return []panel{
		{title: "tps per transport (median of the runs)", unit: "short", kind: "bars", width: 12, height: 8,
			description: "The median tps of each transport's repetitions.",
			queries:     []query{{sel("tunnelbench_transport_tps"), "{{transport}}"}}},
		{title: "tps against the baseline (ratio, 95 % interval)", unit: "percentunit", kind: "bars", width: 12, height: 8,
			description: "A transport's tps over the first transport's, paired by round: estimate and the 95 % interval's " +
				"bounds. The difference is significant only when the whole interval is on one side of 1.",
			queries: []query{{sel("tunnelbench_transport_tps_ratio"), "{{transport}} {{bound}}"}}},
		{title: "Latency percentiles", unit: "s", kind: "bars", width: 12, height: 8,
			description: "Transaction latency over every repetition (merged HDR histograms of pgbench's transaction log).",
			queries:     []query{{sel("tunnelbench_transport_latency_seconds", `quantile=~"0.5|0.9|0.99"`), "{{transport}} p{{quantile}}"}}},
		{title: "Live tps of the running run", unit: "short", kind: "series", width: 12, height: 8,
			description: "pgbench's progress reports while a measured load runs, as they come.",
			queries:     []query{{sel("tunnelbench_transport_live_tps"), "{{benchmark}}/{{transport}}"}}},
		{title: "Connection cost: one new connection", unit: "s", kind: "bars", width: 12, height: 8,
			description: "One new connection's setup through each path, from the best measurement the load made " +
				"(reconnect, then a connection storm, then the runner's setup probe). pgbench's initial connection " +
				"time, every client connecting before the load, is not this figure.",
			queries: []query{{sel("tunnelbench_transport_connection_cost_seconds"), "{{transport}} (from {{from}})"}}},
		{title: "Copy throughput", unit: "Bps", kind: "bars", width: 12, height: 8,
			description: "A copy load's bytes per second through each transport (median of the runs).",
			queries:     []query{{sel("tunnelbench_transport_copy_bytes_per_second"), "{{transport}}"}}},
		{title: "Emulated link: round-trip time", unit: "s", kind: "bars", width: 12, height: 8,
			description: "The link as asked and as the runner measured it before each run (median).",
			queries:     []query{{sel("tunnelbench_transport_link_rtt_seconds"), "{{transport}} {{figure}}"}}},
		{title: "Emulated link: bandwidth", unit: "bps", kind: "bars", width: 12, height: 8,
			description: "The link as asked and as the runner measured it with a COPY of random data (median).",
			queries:     []query{{sel("tunnelbench_transport_link_bits_per_second"), "{{transport}} {{figure}}"}}},
		{title: "CPU per transaction by part", unit: "s", kind: "bars", width: 12, height: 8,
			description: "CPU time per transaction of each part of the path (the client, each sidecar, the gateway, a pooler, " +
				"the server), from its own " +
				"cgroup over the measured window (median of the runs).",
			queries: []query{{sel("tunnelbench_transport_cpu_seconds_per_transaction"), "{{transport}} {{part}}"}}},
		{title: "What limited the runs", unit: "short", kind: "bars", width: 12, height: 8,
			description: "Runs of each transport that a part (client, a sidecar, network) limited by the documented " +
				"thresholds: a client-limited figure measures the runner's CPU, not the path.",
			queries: []query{{sel("tunnelbench_transport_limited_runs"), "{{transport}} {{part}}"}}},
		{title: "Where the round trip went", unit: "s", kind: "bars", width: 24, height: 8,
			description: "A closed-loop transport's round trip per transaction (clients / tps, total) and its budget: each " +
				"measured part's threads on a CPU or waiting for one per transaction, and the rest in none of them " +
				"(unattributed: the network, queues inside a part, the parts not measured), median of the runs.",
			queries: []query{{sel("tunnelbench_transport_round_trip_seconds"), "{{transport}} {{part}}"}}},
		{title: "Bytes on the wire", unit: "decbytes", kind: "bars", width: 24, height: 8,
			description: "Bytes the path put on the network from the runner's pod, both directions, per transaction or " +
				"per row of a copy, after the tunnels' encryption and compression (median of the runs).",
			queries: []query{{sel("tunnelbench_transport_wire_bytes"), "{{transport}} per {{per}}"}}},
		{title: "Open loop: schedule lag", unit: "s", kind: "bars", width: 12, height: 8,
			description: "How late an open-loop transport's transactions started against their schedule (spec.load.rate): " +
				"the median of the runs' means and the longest of any run. A closed loop would have hidden this wait.",
			queries: []query{{sel("tunnelbench_transport_schedule_lag_seconds"), "{{transport}} {{figure}}"}}},
		{title: "Runs that did not hold steady", unit: "short", kind: "bars", width: 12, height: 8,
			description: "Runs whose tps trended while measured (NotSteady): their figure is a moment of a trend; the " +
				"condition recommends a warm-up.",
			queries: []query{{sel("tunnelbench_transport_unsteady_runs"), "{{transport}}"}}},
		{title: "Sweep: tps at each point (median of the runs)", unit: "short", kind: "bars", width: 12, height: 8,
			description: "A swept benchmark's curve, one bar per transport and point (spec.sweep): where the bars stop " +
				"growing is the knee. kubectl tunnelbench report -o html draws it with its intervals.",
			queries: []query{{sel("tunnelbench_sweep_tps", `bound="median"`), "{{transport}} {{parameter}}={{value}}"}}},
		{title: "Sweep: the knee of each transport", unit: "short", kind: "bars", width: 12, height: 8,
			description: "The value of the swept parameter past which a transport gains no more than 5 % (Holm-adjusted " +
				"paired intervals); saturated false: still gaining at the last point.",
			queries: []query{{sel("tunnelbench_sweep_knee"), "{{transport}} {{parameter}} (saturated {{saturated}})"}}},
		{title: "Benchmarks by phase", unit: "short", kind: "stat", width: 24, height: 4,
			queries: []query{{"sum by (phase) (tunnelbench_benchmarks)", "{{phase}}"}}},
	}
}

// datasource is the dashboard's Prometheus, chosen by the datasource variable.
func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}
}

// target is a panel's query; instant for panels that show the latest value.
func target(q query, ref string, instant bool) cog.Builder[variants.Dataquery] {
	t := prometheus.NewDataqueryBuilder().Expr(q.expr).LegendFormat(q.legend).RefId(ref).Datasource(datasource())
	if instant {
		t = t.Instant()
	}
	return t
}

func variable(name, label, query string, multi bool) *dashboard.QueryVariableBuilder {
	v := dashboard.NewQueryVariableBuilder(name).Label(label).Datasource(datasource()).
		Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc)
	if multi {
		v = v.Multi(true).IncludeAll(true).AllValue(".+")
	}
	return v
}

// Build is the dashboard.
func Build() (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder("TunnelBench").Uid(UID).Tags([]string{"tunnelbench", "postgresql"}).
		Description("What the path between an application and PostgreSQL costs: TunnelBench's results.").
		Refresh("30s").Time("now-6h", "now").Timezone("browser").Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")).
		WithVariable(variable("namespace", "Namespace", "label_values(tunnelbench_benchmark_phase, namespace)", false)).
		WithVariable(variable("benchmark", "Benchmark", `label_values(tunnelbench_benchmark_phase{namespace=~"$namespace"}, benchmark)`, false)).
		WithVariable(variable("transport", "Transport",
			`label_values(tunnelbench_transport_tps{namespace=~"$namespace",benchmark=~"$benchmark"}, transport)`, true))
	for _, p := range panels() {
		var pb cog.Builder[dashboard.Panel]
		switch p.kind {
		case "series":
			t := timeseries.NewPanelBuilder().Title(p.title).Description(p.description).Unit(p.unit).Span(p.width).
				Height(p.height).Datasource(datasource()).LineWidth(2).FillOpacity(10)
			for i, q := range p.queries {
				t = t.WithTarget(target(q, string(rune('A'+i)), false))
			}
			pb = t
		case "stat":
			s := stat.NewPanelBuilder().Title(p.title).Unit(p.unit).Span(p.width).Height(p.height).Datasource(datasource())
			for i, q := range p.queries {
				s = s.WithTarget(target(q, string(rune('A'+i)), true))
			}
			pb = s
		default:
			g := bargauge.NewPanelBuilder().Title(p.title).Description(p.description).Unit(p.unit).Span(p.width).
				Height(p.height).Datasource(datasource()).Orientation(common.VizOrientationHorizontal).
				DisplayMode(common.BarGaugeDisplayModeGradient)
			for i, q := range p.queries {
				g = g.WithTarget(target(q, string(rune('A'+i)), true))
			}
			pb = g
		}
		b = b.WithPanel(pb)
	}
	return withHistory(b).Build()
}

// JSON is the dashboard as Grafana imports it.
func JSON() ([]byte, error) {
	d, err := Build()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
