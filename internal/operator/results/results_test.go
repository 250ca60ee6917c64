package results

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/operator/runorder"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/testing/benchfixture"
)

func TestSummarize(t *testing.T) {
	type runs map[string][]float64
	tests := []struct {
		name       string
		transports []string
		tps        runs
		progress   string
		best       string
		verdicts   map[string]benchv1.Verdict
	}{
		{"nothing yet", []string{"a", "b"}, nil, "0/6", "", nil},
		{"baseline only", []string{"a", "b"}, runs{"a": {100}}, "1/6", "a",
			map[string]benchv1.Verdict{"a": benchv1.VerdictBaseline}},
		{"clearly faster", []string{"a", "b"}, runs{"a": {100, 110, 105}, "b": {150, 160, 158}}, "6/6", "b",
			map[string]benchv1.Verdict{"a": benchv1.VerdictBaseline, "b": benchv1.VerdictFaster}},
		{"clearly slower", []string{"a", "b"}, runs{"a": {100, 110, 105}, "b": {70, 75, 72}}, "6/6", "a",
			map[string]benchv1.Verdict{"b": benchv1.VerdictSlower}},
		{"within the noise", []string{"a", "b"}, runs{"a": {100, 130, 105}, "b": {120, 100, 110}}, "6/6", "tie: b, a",
			map[string]benchv1.Verdict{"b": benchv1.VerdictIndistinguishable}},
		{"one round is no interval", []string{"a", "b"}, runs{"a": {100}, "b": {300}}, "2/6", "tie: b, a",
			map[string]benchv1.Verdict{"b": benchv1.VerdictIndistinguishable}},
		{"a partial round pairs only the rounds both ran", []string{"a", "b"}, runs{"a": {100, 110}, "b": {50}}, "3/6",
			"tie: a, b", map[string]benchv1.Verdict{"b": benchv1.VerdictIndistinguishable}},
		{"baseline not measured yet has no comparisons", []string{"a", "b"}, runs{"b": {80}}, "1/6", "b", nil},
		{"a zero baseline compares nothing", []string{"a", "b"}, runs{"a": {0, 0}, "b": {80, 90}}, "4/6", "tie: b, a",
			map[string]benchv1.Verdict{"b": benchv1.VerdictIndistinguishable}},
		// b alone is slower (p 0.027 < 0.05); beside three others it must pass 0.05/4 (Holm) and
		// does not, while c, far off, still does.
		{"a marginal verdict alone", []string{"a", "b"}, runs{"a": {100, 110, 105}, "b": {95, 106, 102}}, "6/6", "a",
			map[string]benchv1.Verdict{"b": benchv1.VerdictSlower}},
		{"the same verdict in a family of four", []string{"a", "b", "c", "d", "e"},
			runs{"a": {100, 110, 105}, "b": {95, 106, 102}, "c": {50, 55, 52}, "d": {99, 112, 104}, "e": {101, 109, 106}},
			"15/15", "tie: e, a, d", map[string]benchv1.Verdict{"b": benchv1.VerdictIndistinguishable, "c": benchv1.VerdictSlower}},
		{"three transports, one ahead of both", []string{"a", "b", "c"},
			runs{"a": {100, 110, 105}, "b": {101, 108, 107}, "c": {200, 230, 210}}, "9/9", "c",
			map[string]benchv1.Verdict{"b": benchv1.VerdictIndistinguishable, "c": benchv1.VerdictFaster}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &benchv1.TunnelBenchmark{Spec: benchv1.TunnelBenchmarkSpec{Load: benchv1.LoadSpec{Repetitions: 3}}}
			for _, n := range tt.transports {
				tb.Spec.Transports = append(tb.Spec.Transports, benchv1.TransportSpec{Name: n, Type: benchv1.TransportDirect})
				for i, tps := range tt.tps[n] {
					rep := &report.Report{Result: &engine.Result{TPS: tps, LatencyAvgMs: 1000 / max(tps, 1)}}
					Record(tb, 0, tb.Spec.Transports[len(tb.Spec.Transports)-1],
						benchv1.RunResult{Round: int32(i + 1)}, rep, specs.Pod{})
				}
			}
			Summarize(tb)
			if tb.Status.Progress != tt.progress {
				t.Errorf("progress %q, want %q", tb.Status.Progress, tt.progress)
			}
			best := ""
			if tb.Status.Best != nil {
				best = tb.Status.Best.Summary
			}
			if best != tt.best {
				t.Errorf("best %q, want %q", best, tt.best)
			}
			for _, r := range tb.Status.Results {
				want, ok := tt.verdicts[r.Transport]
				switch {
				case !ok && tt.verdicts == nil && r.Comparison != nil:
					t.Errorf("%s: comparison %+v, want none", r.Transport, r.Comparison)
				case ok && (r.Comparison == nil || r.Comparison.Verdict != want):
					t.Errorf("%s: comparison %+v, want verdict %s", r.Transport, r.Comparison, want)
				}
			}
		})
	}
}

// TestRecordRun: each run adds its figures; the headline figures are medians over the runs, the
// path's details are the latest run's.
func TestRecordRun(t *testing.T) {
	stddev := 0.2
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	pod := specs.Pod{Env: []corev1.EnvVar{{Name: "PGHOST", Value: "pg-rw"}, {Name: "PGPORT", Value: "5432"},
		{Name: "PGPASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "password"}}},
		{Name: "PGSSLMODE", Value: "require"}}}
	tb := &benchv1.TunnelBenchmark{}
	spec := benchv1.TransportSpec{Name: "x", Type: benchv1.TransportTLS}
	for i, tps := range []float64{1000, 800, 1200} {
		Record(tb, 0, spec, benchv1.RunResult{Round: int32(i + 1), Job: fmt.Sprintf("job-%d", i+1)}, &report.Report{
			Result:    &engine.Result{TPS: tps, LatencyAvgMs: 4000 / tps, LatencyStddevMs: &stddev, Transactions: int64(tps * 10)},
			TLS:       &report.TLS{Version: "TLSv1.3", Cipher: "TLS_AES_256_GCM_SHA384"},
			Command:   "pgbench -T 10",
			Executed:  "pgbench -T 10 -l --log-prefix=/tmp/l/tunnel-0",
			StartTime: start.Add(time.Duration(i) * time.Minute), EndTime: start.Add(time.Duration(i)*time.Minute + 10*time.Second),
		}, pod)
	}
	r := tb.Status.Results[0]
	if len(tb.Status.Results) != 1 || len(r.Runs) != 3 || r.Repetitions != 3 || r.Runs[1].Job != "job-2" || r.Runs[1].TPS != 800 {
		t.Fatalf("results %+v", tb.Status.Results)
	}
	if r.TPS != 1000 || r.TPSSpread.Min != 800 || r.TPSSpread.Max != 1200 || math.Abs(*r.TPSSpread.CV-0.2) > 1e-9 {
		t.Errorf("tps %v spread %+v", r.TPS, r.TPSSpread)
	}
	if r.LatencyAvgMs != 4 || r.Transactions != 30000 {
		t.Errorf("latency %v, transactions %d", r.LatencyAvgMs, r.Transactions)
	}
	if r.TLS == nil || r.TLS.Version != "TLSv1.3" || r.Command != "pgbench -T 10" ||
		r.Executed != "pgbench -T 10 -l --log-prefix=/tmp/l/tunnel-0" ||
		r.Connection != "host=pg-rw port=5432 sslmode=require" || r.EndTime.Sub(r.StartTime.Time) != 2*time.Minute+10*time.Second {
		t.Errorf("result %+v", r)
	}
	if r.ConnectionsPerSecond != nil || r.ConnectionStorm != nil {
		t.Error("no connection figures without reconnect or storm")
	}
}

func TestRecordRunConnectionFigures(t *testing.T) {
	tests := []struct {
		name  string
		rep   report.Report
		check func(t *testing.T, r *benchv1.TransportResult)
	}{
		{"reconnect counts failed transactions as connections", report.Report{
			Result: &engine.Result{TPS: 90, Transactions: 900, FailedTransactions: 100, Reconnect: true},
		}, func(t *testing.T, r *benchv1.TransportResult) {
			if r.ConnectionsPerSecond == nil || *r.ConnectionsPerSecond != 100 {
				t.Errorf("connections per second %v, want 100", r.ConnectionsPerSecond)
			}
		}},
		{"connection storm", report.Report{
			Result: &engine.Result{TPS: 90, Transactions: 900},
			Storm:  &report.Storm{Connections: 1000, PerSecond: 500, MeanConnectMs: 1.5},
		}, func(t *testing.T, r *benchv1.TransportResult) {
			s := r.ConnectionStorm
			if s == nil || s.TotalSeconds != 2 || s.MeanConnectionMs != 2 || s.MeanConnectMs != 1.5 {
				t.Errorf("storm %+v", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &benchv1.TunnelBenchmark{}
			tt.check(t, Record(tb, 0, benchv1.TransportSpec{Name: "x"}, benchv1.RunResult{Round: 1}, &tt.rep, specs.Pod{}))
		})
	}
}

// TestLargestStatusFits fills the status of the largest benchmarks the API accepts (16 transports
// of 30-character names, 20 repetitions each; and the largest sweeps, at 312 runs and 24 curve
// points, or 16 points of one transport) with 8 tunnels, a 1200-point progress per
// run, latency histograms spread over six decades, and checks that nothing is truncated and that
// the whole status stays under 256 KiB.
func TestLargestStatusFits(t *testing.T) {
	if testing.Short() {
		// Half of make test-short's time (31 s of its longest package); make test runs it.
		t.Skip("the largest statuses' size: make test")
	}
	for _, shape := range []struct{ points, transports, reps int }{{1, 16, 20}, {2, 12, 13}, {12, 2, 13}, {3, 8, 13}, {16, 1, 20}} {
		t.Run(fmt.Sprintf("%d points × %d transports × %d repetitions", shape.points, shape.transports, shape.reps), func(t *testing.T) {
			t.Parallel()
			tb := largestStatus(t, shape.points, shape.transports, int32(shape.reps))
			// One run's samples, built once: a 20,000-line log read and encoded per result was
			// most of this test's time.
			samples := samplesOf(t)
			b, err := json.Marshal(tb.Status)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("status: %d bytes", len(b))
			if len(b) > 256*1024 {
				t.Errorf("status is %d bytes, over 256 KiB", len(b))
			}
			var back benchv1.TunnelBenchmarkStatus
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			total := shape.points * shape.transports * shape.reps
			if got := len(back.AllResults()); got != shape.points*shape.transports || back.Progress != fmt.Sprintf("%d/%d", total, total) {
				t.Fatalf("%d results, progress %s", got, back.Progress)
			}
			for _, r := range back.AllResults() {
				points := 0
				for _, s := range r.Series {
					points += len(s.TPS)
				}
				if len(r.Runs) != shape.reps || len(r.Series) != shape.reps || points > 120 || points == 0 || r.Latency == nil ||
					r.Latency.Samples != int64(shape.reps)*samples || r.Comparison == nil || r.Runs[shape.reps-1].P99Ms == nil {
					t.Errorf("%s: %d runs, %d series (%d points), latency %+v", r.Transport, len(r.Runs), len(r.Series), points, r.Latency)
				}
			}
			if shape.points > 1 && (len(back.Sweep.Curves) != shape.transports || back.Sweep.Curves[0].Knee == nil) {
				t.Errorf("sweep curves: %+v", back.Sweep.Curves)
			}
		})
	}
}

// largestHistogram is a wide histogram (1 µs to about 10 s, spread log-uniformly), which encodes large.
func largestHistogram(t testing.TB) (string, int64) {
	return benchfixture.Histogram(t, 20_000, func(i int) int64 { return int64(math.Pow(10, float64(i%7000)/1000)) })
}

func samplesOf(t testing.TB) int64 { _, n := largestHistogram(t); return n }

// largestStatus records every run of a benchmark of the shape with the largest figures each field
// takes.
func largestStatus(t testing.TB, points, transports int, reps int32) *benchv1.TunnelBenchmark {
	tb := &benchv1.TunnelBenchmark{Spec: benchv1.TunnelBenchmarkSpec{Load: benchv1.LoadSpec{Repetitions: reps}}}
	tb.Name = strings.Repeat("b", 63)
	if points > 1 {
		tb.Spec.Sweep = &benchv1.SweepSpec{}
		for p := range points {
			tb.Spec.Sweep.Clients = append(tb.Spec.Sweep.Clients, int32(1000-points+p+1))
		}
	}
	hist, samples := largestHistogram(t)
	progress := benchfixture.Progress(report.MaxProgressPoints, func(i int) float64 { return 123456.789 + float64(i) })
	stddev := 0.123456
	for ti := range transports {
		tb.Spec.Transports = append(tb.Spec.Transports, benchv1.TransportSpec{
			Name: fmt.Sprintf("%s-%02d", strings.Repeat("t", 27), ti), Type: benchv1.TransportSSH})
	}
	for point := range points {
		for _, spec := range tb.Spec.Transports {
			var lats []*report.Latency
			for round := int32(1); round <= reps; round++ {
				rep := &report.Report{
					Result: &engine.Result{TPS: 123456.789 + float64(point*1000) + float64(round)*17.3, LatencyAvgMs: 0.123456,
						LatencyStddevMs: &stddev, ConnectionTimeMs: 12.345678, Transactions: 1234567890, Progress: progress},
					Latency:   &report.Latency{Histogram: hist, SamplingRate: 0.3333, Samples: samples},
					TLS:       &report.TLS{Version: "TLSv1.3", Cipher: "TLS_AES_256_GCM_SHA384"},
					Command:   "pgbench -b select-only -M prepared -c 64 -j 8 -T 86400 -P 1 " + strings.Repeat("x", 100),
					StartTime: time.Now(), EndTime: time.Now(),
				}
				lats = append(lats, rep.Latency)
				ref := benchv1.RunRef{Transport: spec.Name, Point: point, Round: round}
				res := Record(tb, point, spec, benchv1.RunResult{Round: round, Job: tb.RunJobName(ref),
					Node: strings.Repeat("n", 63)}, rep, specs.Pod{})
				if err := MergeLatency(res, lats); err != nil {
					t.Fatal(err)
				}
				res.SSH = &benchv1.NegotiatedSSH{Cipher: "chacha20-poly1305@openssh.com", MAC: "<implicit>", Compression: "zlib@openssh.com"}
				res.Tunnels = nil
				for i := range 8 {
					res.Tunnels = append(res.Tunnels, benchv1.TunnelResult{Tunnel: int32(i), TPS: 12345.678, LatencyAvgMs: 1.234,
						Transactions: 123456789})
				}
				res.Provenance = &benchv1.Provenance{Node: strings.Repeat("n", 63), ServerNode: strings.Repeat("s", 63),
					RunnerImage:    "registry.example.com/tunnelbench/tunnelbench@sha256:" + strings.Repeat("0", 64),
					PgbenchVersion: "pgbench (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)", CPURequest: "500m", MemoryLimit: "512Mi"}
				Summarize(tb)
			}
		}
	}
	tb.Status.RunOrder = runorder.Planned(tb)
	return tb
}

// TestComparePlacements: a transport whose runs ran on other nodes (runner→server) than the
// baseline's is flagged, its reason saying where; the same placements, or nodes not known, are not.
func TestComparePlacements(t *testing.T) {
	result := func(name string, nodes ...string) *benchv1.TransportResult {
		r := &benchv1.TransportResult{Transport: name}
		for i := range 3 {
			run := benchv1.RunResult{Round: int32(i + 1), TPS: 1000 + float64(10*i)}
			if len(nodes) > 0 {
				run.Node, run.ServerNode = nodes[2*(i%(len(nodes)/2))], nodes[2*(i%(len(nodes)/2))+1]
			}
			r.Runs = append(r.Runs, run)
		}
		return r
	}
	tests := []struct {
		name      string
		baseline  *benchv1.TransportResult
		candidate *benchv1.TransportResult
		mixed     bool
		says      string
	}{
		{"the same nodes", result("direct", "a", "db"), result("tls", "a", "db"), false, ""},
		{"runner on another node", result("direct", "a", "db"), result("tls", "b", "db"), true,
			"its runs ran on b→db, the baseline's on a→db: the ratio mixes placements"},
		{"runs spread over two nodes", result("direct", "a", "db"), result("tls", "a", "db", "b", "db"), true, "a→db, b→db"},
		{"nodes not known", result("direct"), result("tls", "b", "db"), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := compare(benchv1.MethodPaired, tt.baseline, tt.candidate)
			if c.MixedPlacement != tt.mixed || !strings.Contains(c.Reason, tt.says) {
				t.Errorf("mixed %v, reason %q; want %v, %q", c.MixedPlacement, c.Reason, tt.mixed, tt.says)
			}
		})
	}
}

// BenchmarkRecordedPass is the operator's own work in the pass that records a benchmark's last
// run, the heaviest: its summaries and curves over every run (Summarize) and the next run's lookup
// through the whole schedule (nextRun), for sweeps of 1, 4 and 16 points of 3 transports.
func BenchmarkRecordedPass(b *testing.B) {
	for _, points := range []int{1, 4, 16} {
		transports := 3
		if points == 16 {
			transports = 1
		}
		b.Run(fmt.Sprintf("%d points × %d transports × 6 repetitions", points, transports), func(b *testing.B) {
			tb := largestStatus(b, points, transports, 6)
			b.ResetTimer()
			for b.Loop() {
				Summarize(tb)
				if _, more := runorder.Next(tb); more {
					b.Fatal("a run left")
				}
			}
		})
	}
}
