package cost

import (
	"math"

	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
)

// Wire is a run's bytes on the network, per transaction (transactions > 0) or per row of a copy
// (rows > 0); nil without counters.
func Wire(w *report.Wire, transactions, rows int64) *benchv1.WireCost {
	if w == nil {
		return nil
	}
	out := &benchv1.WireCost{ReceivedBytes: clamp(w.ReceivedBytes), SentBytes: clamp(w.SentBytes)}
	both := float64(w.ReceivedBytes) + float64(w.SentBytes)
	if transactions > 0 {
		out.BytesPerTransaction = ptr.To(round(both/float64(transactions), 1))
	}
	if rows > 0 {
		out.BytesPerRow = ptr.To(round(both/float64(rows), 1))
	}
	return out
}

func clamp(v uint64) int64 { return int64(min(v, math.MaxInt64)) }
