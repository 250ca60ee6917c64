package render

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/sweep"
	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

// sweepFixture is a completed clients sweep of two transports: direct doubles up to 4 clients and
// is flat beyond, ssh saturates at 2 (its one tunnel), limited by its sidecar.
func sweepFixture() summary.Summary {
	values := []int32{1, 2, 4, 8}
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "scaling"}}
	tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"}, {Name: "ssh", Type: "ssh"}}
	tb.Spec.Sweep = &benchv1.SweepSpec{Clients: values}
	tb.Spec.Load = benchv1.LoadSpec{Builtin: "select-only", Protocol: "prepared", Repetitions: 3,
		Duration: &metav1.Duration{Duration: 10e9}}
	tb.Status.Phase, tb.Status.Progress = benchv1.PhaseCompleted, "24/24"
	model := map[string]func(c int32) float64{
		"direct": func(c int32) float64 { return 2000 * float64(min(c, 4)) },
		"ssh":    func(c int32) float64 { return 1500 * float64(min(c, 2)) },
	}
	for p, v := range values {
		for _, tr := range tb.Spec.Transports {
			res := benchv1.TransportResult{Transport: tr.Name, Type: tr.Type}
			var tps []float64
			for r := range int32(3) {
				x := model[tr.Name](v) * (1 + 0.02*float64(r) - 0.01*float64(p%2))
				run := benchv1.RunResult{Round: r + 1, TPS: x, LatencyAvgMs: 1000 * float64(v) / x, Transactions: int64(10 * x)}
				if tr.Name == "ssh" && v >= 2 {
					run.Limiter = &benchv1.Limiter{Part: "ssh", Evidence: "the ssh sidecar at 98 % of its core"}
				}
				res.Runs, tps = append(res.Runs, run), append(tps, x)
			}
			res.TPS, res.LatencyAvgMs = tps[1], 1000*float64(v)/tps[1]
			res.Latency = &benchv1.LatencyDistribution{P50Ms: 0.9 * res.LatencyAvgMs, P99Ms: ptr.To(2.5 * res.LatencyAvgMs)}
			stored := tb.ResultFor(p, tr)
			res.Point = stored.Point
			*stored = res
		}
		at := tb.ResultsAt(p)
		at[0].Comparison = &benchv1.Comparison{Baseline: "direct", Ratio: 1, Verdict: benchv1.VerdictBaseline}
		ratio, err := sweep.RatioOf(benchv1.MethodPaired, &at[0], &at[1])
		at[1].Comparison = sweep.Comparison(benchv1.MethodPaired, "direct", ratio, err, 0)
	}
	tb.InitSweep()
	tb.Status.Sweep.Curves = sweep.Curves(benchv1.MethodPaired, tb.Spec.Transports, sweep.PointsOf(tb))
	return summary.Of(tb)
}

func TestSweepReportFormats(t *testing.T) {
	s := sweepFixture()
	for _, format := range []string{"table", "markdown", "csv"} {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Report(&b, s, format); err != nil {
				t.Fatal(err)
			}
			golden(t, "sweep."+format, b.Bytes())
		})
	}
	var b bytes.Buffer
	if err := Report(&b, s, "table"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"direct: knee at 4 clients; peak", "ssh: knee at 2 clients", "ssh in 3/3 runs",
		"clients swept over 1, 2, 4, 8", "4 is the last point that gains beyond 5 %"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSweepHTML: the page draws a line per transport with its band and rings each knee.
func TestSweepHTML(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, sweepFixture()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`id="curves"`, `id="curve-latency"`, "<polyline", "<polygon", "<title>knee</title>",
		"direct: knee at 4 clients", "ssh at 8: 3030 tps"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<title>knee</title>"); n != 4 {
		t.Errorf("%d knees ringed, want 2 per chart", n)
	}
}
