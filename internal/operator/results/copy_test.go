package results

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// TestCopyResults: a copy load's runs are summarized, compared and ranked by MB/s, never by a tps
// they do not have.
func TestCopyResults(t *testing.T) {
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: benchv1.TunnelBenchmarkSpec{
		Transports: []benchv1.TransportSpec{{Name: "ssh", Type: "ssh"}, {Name: "ssh-compressed", Type: "ssh"}},
		Load:       benchv1.LoadSpec{Repetitions: 3},
	}}
	mbps := map[string][]float64{"ssh": {6.1, 6.0, 6.2}, "ssh-compressed": {30, 25, 35}}
	for round := range 3 {
		for _, tr := range tb.Spec.Transports {
			m := mbps[tr.Name][round]
			Record(tb, 0, tr, benchv1.RunResult{Round: int32(round + 1)}, &report.Report{Copy: &report.Copy{
				Table: "tunnelbench_copy_text_16777216", Data: "text", Bytes: 16_900_000, Rows: 16384, Seconds: 16.9 / m,
				MBPerSecond: m, RowsPerSecond: 16384 * m / 16.9}}, specs.Pod{})
			Summarize(tb)
		}
	}
	plain, compressed := tb.Status.Result("ssh"), tb.Status.Result("ssh-compressed")
	if plain.Copy == nil || plain.Copy.MBPerSecond != 6.1 || plain.Copy.MBPerSecondSpread.Min != 6.0 || plain.Copy.Rows != 16384 ||
		plain.TPS != 0 || plain.Latency != nil {
		t.Fatalf("ssh: %+v copy %+v", plain, plain.Copy)
	}
	if compressed.Copy.MBPerSecond != 30 || *compressed.Runs[2].MBPerSecond != 35 {
		t.Errorf("ssh-compressed copy %+v", compressed.Copy)
	}
	c := compressed.Comparison
	if c == nil || c.Verdict != benchv1.VerdictFaster || c.Ratio < 4 || c.Ratio > 6 {
		t.Errorf("comparison by MB/s: %+v", c)
	}
	if b := tb.Status.Best; b == nil || b.Transport != "ssh-compressed" || b.MBPerSecond != 30 || b.TPS != 0 {
		t.Errorf("best %+v", b)
	}
}
