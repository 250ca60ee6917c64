package metrics

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func TestConnectionCostSeries(t *testing.T) {
	r := NewRecorder(prometheus.NewRegistry())
	perSecond := 171.0
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
	tb.Status.Results = []benchv1.TransportResult{{Transport: "sidecar", TPS: 171, ConnectionsPerSecond: &perSecond,
		ConnectionStorm: &benchv1.ConnectionStormResult{Connections: 300, ConnectionsPerSecond: 2960, MeanConnectionMs: 0.338}}}
	r.Observe(tb)
	cases := []struct {
		name  string
		gauge *prometheus.GaugeVec
		want  float64
	}{
		{"connections/s", r.connections, 171},
		{"storm connections/s", r.stormRate, 2960},
		{"storm cycle seconds", r.stormCycle, 0.000338},
	}
	for _, c := range cases {
		if got := testutil.ToFloat64(c.gauge.WithLabelValues("ns", "b", "sidecar")); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	r.Forget("ns", "b")
	if n := testutil.CollectAndCount(r.stormRate); n != 0 {
		t.Errorf("%d storm series left after Forget", n)
	}
}

// TestConnectionCostFrom: the connection cost series is the report's figure, labelled with where it
// comes from, and never pgbench's initial connection time.
func TestConnectionCostFrom(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reconnect bool
		result    benchv1.TransportResult
		from      string
		want      float64
	}{
		{"reconnect: pgbench's average connection time", true, benchv1.TransportResult{Transport: "tls",
			Runs: []benchv1.RunResult{{ConnectionTimeMs: 9}, {ConnectionTimeMs: 10}, {ConnectionTimeMs: 11}}},
			"reconnect", 0.010},
		{"a storm's connect time", false, benchv1.TransportResult{Transport: "tls",
			Runs:            []benchv1.RunResult{{ConnectionTimeMs: 52}},
			ConnectionStorm: &benchv1.ConnectionStormResult{Connect: &benchv1.MedianInterval{Median: 17.2, Samples: 6}}},
			"storm", 0.0172},
		{"the setup probe", false, benchv1.TransportResult{Transport: "tls",
			Runs: []benchv1.RunResult{{ConnectionTimeMs: 52, Setup: &benchv1.ConnectionSetup{Probes: 5, TotalMs: 9.41}}}},
			"setup probe", 0.00941},
		{"only the clients' start-up: no series", false, benchv1.TransportResult{Transport: "tls",
			Runs: []benchv1.RunResult{{ConnectionTimeMs: 52}}}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorder(prometheus.NewRegistry())
			tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
			tb.Spec.Load.Reconnect = tc.reconnect
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "tls", Type: benchv1.TransportTLS}}
			tb.Status.Results = []benchv1.TransportResult{tc.result}
			r.Observe(tb)
			if tc.from == "" {
				if n := testutil.CollectAndCount(r.connectionCost); n != 0 {
					t.Errorf("%d connection cost series from pgbench's initial connection time", n)
				}
				return
			}
			got := testutil.ToFloat64(r.connectionCost.WithLabelValues("ns", "b", "tls", tc.from))
			if math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("connection cost from %s = %v s, want %v", tc.from, got, tc.want)
			}
		})
	}
}

func TestUncertaintySeries(t *testing.T) {
	r := NewRecorder(prometheus.NewRegistry())
	cv, lo, hi := 0.05, 0.7, 0.8
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
	tb.Status.Results = []benchv1.TransportResult{{Transport: "ssh", TPS: 100,
		TPSSpread: &benchv1.Spread{Median: 100, CV: &cv},
		Latency: &benchv1.LatencyDistribution{P50Ms: 1, P90Ms: ptr.To(2.0), P99Ms: ptr.To(5.0), MaxMs: 20,
			Unsupported: []string{"p99.9"}},
		Comparison: &benchv1.Comparison{Ratio: 0.75, Lower: &lo, Upper: &hi}}}
	r.Observe(tb)
	cases := []struct {
		name  string
		gauge prometheus.Gauge
		want  float64
	}{
		{"cv", r.tpsCV.WithLabelValues("ns", "b", "ssh"), 0.05},
		{"p99", r.latencyQuant.WithLabelValues("ns", "b", "ssh", "0.99"), 0.005},
		{"max", r.latencyQuant.WithLabelValues("ns", "b", "ssh", "1"), 0.02},
		{"ratio", r.ratio.WithLabelValues("ns", "b", "ssh", "estimate"), 0.75},
		{"lower", r.ratio.WithLabelValues("ns", "b", "ssh", "lower"), 0.7},
		{"upper", r.ratio.WithLabelValues("ns", "b", "ssh", "upper"), 0.8},
	}
	for _, c := range cases {
		if got := testutil.ToFloat64(c.gauge); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	r.Forget("ns", "b")
	if n := testutil.CollectAndCount(r.latencyQuant) + testutil.CollectAndCount(r.ratio); n != 0 {
		t.Errorf("%d series left after Forget", n)
	}
}

// TestLiveTPS: the live gauge follows the running transport's measured load, one series per
// benchmark, and none during a warm-up or between runs.
func TestLiveTPS(t *testing.T) {
	r := NewRecorder(prometheus.NewRegistry())
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
	steps := []struct {
		live   *benchv1.LiveRun
		series int
		want   float64
	}{
		{&benchv1.LiveRun{Transport: "direct", Phase: "warm-up", TPS: 900}, 0, 0},
		{&benchv1.LiveRun{Transport: "direct", Phase: "load", TPS: 1000}, 1, 1000},
		{&benchv1.LiveRun{Transport: "tls", Phase: "load", TPS: 700}, 1, 700},
		{nil, 0, 0},
	}
	for i, s := range steps {
		tb.Status.Live = s.live
		r.Observe(tb)
		if n := testutil.CollectAndCount(r.liveTPS); n != s.series {
			t.Fatalf("step %d: %d live series, want %d", i, n, s.series)
		}
		if s.series == 1 {
			if got := testutil.ToFloat64(r.liveTPS.WithLabelValues("ns", "b", s.live.Transport)); got != s.want {
				t.Errorf("step %d: live tps %v, want %v", i, got, s.want)
			}
		}
	}
}

// TestLinkAndFailureSeries: a link's figures as asked and measured, and a failed benchmark's
// series for the alert, gone once it is forgotten.
func TestLinkAndFailureSeries(t *testing.T) {
	r := NewRecorder(prometheus.NewRegistry())
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
	tb.Status.Results = []benchv1.TransportResult{{Transport: "wan", Link: &benchv1.LinkResult{
		Asked:    benchv1.LinkFigures{RTTMs: 10, BitsPerSecond: 50e6},
		Measured: &benchv1.MeasuredLink{RTTMs: 10.9, BitsPerSecond: 49.8e6}}}}
	tb.Status.Phase = benchv1.PhaseFailed
	tb.Status.Conditions = []metav1.Condition{{Type: conditions.Failed, Status: "True", Reason: "Timeout"}}
	r.Observe(tb)
	for _, c := range []struct {
		g    prometheus.Gauge
		want float64
	}{
		{r.linkRTT.WithLabelValues("ns", "b", "wan", "asked"), 0.010},
		{r.linkRTT.WithLabelValues("ns", "b", "wan", "measured"), 0.0109},
		{r.linkBandwidth.WithLabelValues("ns", "b", "wan", "measured"), 49.8e6},
		{r.failedBench.WithLabelValues("ns", "b", "Timeout"), 1},
	} {
		if got := testutil.ToFloat64(c.g); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%v, want %v", got, c.want)
		}
	}
	r.Forget("ns", "b")
	if n := testutil.CollectAndCount(r.failedBench) + testutil.CollectAndCount(r.linkRTT); n != 0 {
		t.Errorf("%d series left after Forget", n)
	}
}

// TestCostSeries: each part's CPU per transaction is the median of its runs', in seconds, and the
// runs each limiter limited are counted; both go once the benchmark is forgotten.
// TestScheduleSeries: an open-loop transport's lag (median of the runs' means, the longest of any
// run), its skipped transactions, and the runs that trended.
func TestScheduleSeries(t *testing.T) {
	r := NewRecorder(prometheus.NewRegistry())
	run := func(lag, longest float64, skipped int64, steady bool) benchv1.RunResult {
		return benchv1.RunResult{OpenLoop: &benchv1.OpenLoopRun{RateTPS: 100, ScheduleLagMs: lag, ScheduleLagMaxMs: longest,
			Skipped: skipped}, Steadiness: &benchv1.Steadiness{Steady: steady}}
	}
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
	tb.Status.Results = []benchv1.TransportResult{{Transport: "wan",
		Runs: []benchv1.RunResult{run(0.5, 9, 0, true), run(0.3, 12, 2, false), run(0.6, 4, 1, true)}}}
	r.Observe(tb)
	for _, c := range []struct {
		g    prometheus.Gauge
		want float64
	}{
		{r.scheduleLag.WithLabelValues("ns", "b", "wan", "mean"), 0.5e-3},
		{r.scheduleLag.WithLabelValues("ns", "b", "wan", "max"), 12e-3},
		{r.skipped.WithLabelValues("ns", "b", "wan"), 3},
		{r.unsteadyRuns.WithLabelValues("ns", "b", "wan"), 1},
	} {
		if got := testutil.ToFloat64(c.g); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%v, want %v", got, c.want)
		}
	}
	r.Forget("ns", "b")
	if n := testutil.CollectAndCount(r.scheduleLag) + testutil.CollectAndCount(r.skipped) +
		testutil.CollectAndCount(r.unsteadyRuns); n != 0 {
		t.Errorf("%d series left after Forget", n)
	}
}

func TestCostSeries(t *testing.T) {
	r := NewRecorder(prometheus.NewRegistry())
	us := func(v float64) *float64 { return &v }
	run := func(client, tunnel float64, limiter string) benchv1.RunResult {
		out := benchv1.RunResult{Cost: []benchv1.PartCost{{Part: "client", CPUMicrosPerTransaction: us(client)},
			{Part: "tunnel-0", CPUMicrosPerTransaction: us(tunnel)}}}
		if limiter != "" {
			out.Limiter = &benchv1.Limiter{Part: limiter}
		}
		out.Wire = &benchv1.WireCost{BytesPerTransaction: us(10 * client)}
		out.Budget = &benchv1.TimeBudget{RoundTripMs: 1, UnattributedMs: 1 - (client+tunnel)/100,
			Parts: []benchv1.BudgetPart{{Part: "client", Ms: client / 100}, {Part: "tunnel-0", Ms: tunnel / 100}}}
		return out
	}
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
	tb.Status.Results = []benchv1.TransportResult{{Transport: "ssh",
		Runs: []benchv1.RunResult{run(20, 50, "tunnel-0"), run(22, 40, ""), run(30, 45, "tunnel-0")}}}
	r.Observe(tb)
	for _, c := range []struct {
		g    prometheus.Gauge
		want float64
	}{
		{r.cpuPerTx.WithLabelValues("ns", "b", "ssh", "client"), 22e-6},
		{r.cpuPerTx.WithLabelValues("ns", "b", "ssh", "tunnel-0"), 45e-6},
		{r.limitedRuns.WithLabelValues("ns", "b", "ssh", "tunnel-0"), 2},
		{r.wireBytes.WithLabelValues("ns", "b", "ssh", "transaction"), 220},
		{r.roundTrip.WithLabelValues("ns", "b", "ssh", "total"), 1e-3},
		{r.roundTrip.WithLabelValues("ns", "b", "ssh", "client"), 0.22e-3},
		{r.roundTrip.WithLabelValues("ns", "b", "ssh", "tunnel-0"), 0.45e-3},
		{r.roundTrip.WithLabelValues("ns", "b", "ssh", "unattributed"), 0.3e-3},
	} {
		if got := testutil.ToFloat64(c.g); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%v, want %v", got, c.want)
		}
	}
	r.Forget("ns", "b")
	if n := testutil.CollectAndCount(r.cpuPerTx) + testutil.CollectAndCount(r.limitedRuns) +
		testutil.CollectAndCount(r.wireBytes) + testutil.CollectAndCount(r.roundTrip); n != 0 {
		t.Errorf("%d series left after Forget", n)
	}
}

// TestSweepSeries: a sweep's curve has a series per point and bound, its latency per quantile
// where supported, and its knee; a knee that moves replaces its series.
func TestSweepSeries(t *testing.T) {
	r := NewRecorder(prometheus.NewRegistry())
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
	curve := benchv1.SweepCurve{Transport: "ssh", Knee: ptr.To[int32](4), Saturated: false, Points: []benchv1.CurvePoint{
		{Value: 1, TPS: 100, TPSLow: ptr.To(95.0), TPSHigh: ptr.To(105.0), P50Ms: ptr.To(2.0), P99Ms: ptr.To(5.0)},
		{Value: 4, TPS: 390, P50Ms: ptr.To(2.5)},
	}}
	tb.Status.Sweep = &benchv1.SweepStatus{Parameter: benchv1.SweepClients, Curves: []benchv1.SweepCurve{curve}}
	r.Observe(tb)
	for _, c := range []struct {
		g    prometheus.Gauge
		want float64
	}{
		{r.sweepTPS.WithLabelValues("ns", "b", "ssh", "clients", "1", "median"), 100},
		{r.sweepTPS.WithLabelValues("ns", "b", "ssh", "clients", "1", "lower"), 95},
		{r.sweepTPS.WithLabelValues("ns", "b", "ssh", "clients", "4", "median"), 390},
		{r.sweepLatency.WithLabelValues("ns", "b", "ssh", "clients", "1", "0.99"), 5e-3},
		{r.sweepKnee.WithLabelValues("ns", "b", "ssh", "clients", "false"), 4},
	} {
		if got := testutil.ToFloat64(c.g); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%v, want %v", got, c.want)
		}
	}
	// No interval at 4 clients, no p99 there: no series rather than a zero.
	if n := testutil.CollectAndCount(r.sweepTPS); n != 4 {
		t.Errorf("%d tps series, want 4", n)
	}
	if n := testutil.CollectAndCount(r.sweepLatency); n != 3 {
		t.Errorf("%d latency series, want 3", n)
	}
	tb.Status.Sweep.Curves[0].Saturated = true
	r.Observe(tb)
	if n := testutil.CollectAndCount(r.sweepKnee); n != 1 {
		t.Errorf("%d knee series after the knee settled, want 1", n)
	}
	r.Forget("ns", "b")
	if n := testutil.CollectAndCount(r.sweepTPS) + testutil.CollectAndCount(r.sweepKnee); n != 0 {
		t.Errorf("%d series left after Forget", n)
	}
}
