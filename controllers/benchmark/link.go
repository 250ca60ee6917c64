package benchmark

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
)

// recordLink keeps a run's measured link and the transport's link: as asked, and the median of
// its runs' measures.
func recordLink(out *benchv1.TransportResult, asked benchv1.Link, hop string, measured *report.Link) {
	if !asked.Emulated() {
		out.Link = nil
		return
	}
	if measured != nil {
		out.Runs[len(out.Runs)-1].Link = &benchv1.MeasuredLink{RTTMs: round3(measured.RTTMs),
			ConnectMs: round3(measured.ConnectMs), BitsPerSecond: measured.BitsPerSecond}
	}
	out.Link = &benchv1.LinkResult{Emulator: asked.Emulator, Hop: hop, Asked: asked.Figures()}
	var rtt, connect, bps []float64
	for _, r := range out.Runs {
		if r.Link != nil {
			rtt, connect = append(rtt, r.Link.RTTMs), append(connect, r.Link.ConnectMs)
			bps = append(bps, float64(r.Link.BitsPerSecond))
		}
	}
	if len(rtt) > 0 {
		out.Link.Measured = &benchv1.MeasuredLink{RTTMs: round3(stats.Median(rtt)), ConnectMs: round3(stats.Median(connect)),
			BitsPerSecond: int64(stats.Median(bps))}
	}
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// linkMisses says how a measured link misses the asked one by more than LinkTolerance, "" when it
// does not.
func linkMisses(l *benchv1.LinkResult) string {
	if l == nil || l.Measured == nil {
		return ""
	}
	var misses []string
	off := func(measured, asked float64) bool {
		return asked > 0 && math.Abs(measured-asked) > benchv1.LinkTolerance*asked
	}
	if off(l.Measured.RTTMs, l.Asked.RTTMs) {
		misses = append(misses, fmt.Sprintf("RTT %.3f ms for %.3g ms asked", l.Measured.RTTMs, l.Asked.RTTMs))
	}
	if off(float64(l.Measured.BitsPerSecond), float64(l.Asked.BitsPerSecond)) {
		misses = append(misses, fmt.Sprintf("bandwidth %s for %s asked", bitRate(l.Measured.BitsPerSecond),
			bitRate(l.Asked.BitsPerSecond)))
	}
	return strings.Join(misses, ", ")
}

// bitRate renders bits per second for a message.
func bitRate(bps int64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.3g Gbit/s", float64(bps)/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.3g Mbit/s", float64(bps)/1e6)
	default:
		return fmt.Sprintf("%.3g Kbit/s", float64(bps)/1e3)
	}
}

// judgeLinks sets ConditionLinkMismatch from every transport's link: True, naming each transport
// whose measured link misses the asked one, or False once links were measured and all hold.
func (r *TunnelBenchmarkReconciler) judgeLinks(tb *benchv1.TunnelBenchmark) {
	var misses []string
	measured := false
	for _, res := range tb.Status.AllResults() {
		if res.Link == nil || res.Link.Measured == nil {
			continue
		}
		measured = true
		if m := linkMisses(res.Link); m != "" {
			misses = append(misses, fmt.Sprintf("transport %s (%s): measured %s", res.Transport, res.Link.Hop, m))
		}
	}
	switch {
	case len(misses) > 0:
		msg := strings.Join(misses, "; ") + fmt.Sprintf(": more than %.0f%% off, so its figures describe another link "+
			"than the one asked for (a busy node, or a path slower than the link)", benchv1.LinkTolerance*100)
		if !r.hasCondition(tb, conditions.LinkMismatch, metav1.ConditionTrue, conditions.ReasonMeasuredLinkDiffers) {
			r.event(tb, corev1.EventTypeWarning, conditions.ReasonMeasuredLinkDiffers, "Measure", "%s", msg)
		}
		r.setCondition(tb, conditions.LinkMismatch, metav1.ConditionTrue, conditions.ReasonMeasuredLinkDiffers, msg)
	case measured:
		r.setCondition(tb, conditions.LinkMismatch, metav1.ConditionFalse, conditions.ReasonMeasuredLinkHolds,
			fmt.Sprintf("every emulated link measured within %.0f%% of the one asked", benchv1.LinkTolerance*100))
	}
}
