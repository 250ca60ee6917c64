// Package budget splits a closed-loop run's round trip by where it went. A closed loop of c
// clients at x transactions a second takes c/x seconds per transaction and client: the round trip.
// By Little's law, a part of the path whose threads were on a CPU or waiting for one for a share u
// of the window (u summed over its threads: the mean number of them busy) held each transaction
// u/x seconds of it. The parts' shares and the unattributed rest add up to the round trip. The
// rest is the network, the parts not measured, and the queues inside a part:
// a transaction waiting behind another in the same thread of pgbench, sshd or PgBouncer is busy
// in no thread, so a single-threaded part's share is a lower bound once transactions queue in it.
//
// Pure: the caller reads the threads (internal/runner/schedstat) and the run's figures.
package budget

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
)

// FullCore is the busiest thread's share of one core over the window from which a part is taken
// to have run out though its share of the node is small: a single-threaded part (ssh, sshd,
// PgBouncer) cannot use more than one core, and a thread kept this busy has no time to spare. Below
// 1 for the reasons cost.SaturatedUtilization is.
const FullCore = 0.9

// Part is one part's threads over a window inside the run's load (report.Threads), and the time
// it held the load's transactions, as it counted it itself, over HeldWindow seconds: an emulated
// link's delay, a pooler's queue for a server connection.
//
// HeldCoversThreads says the part's threads work inside its holds, not beside them: the link
// emulator's precise sleep ends each hold on a CPU (a nanosleep's wake-up, then a spin of up to
// 100 µs), so its share is the larger of the two, not their sum. A pooler's threads serve other
// transactions while one waits in its queue: its share is their sum.
type Part struct {
	Name              string
	Threads           *report.Threads
	Held              time.Duration
	HeldWindow        float64
	HeldCoversThreads bool
}

// maxParts is the API's bound on a budget's parts.
const maxParts = 16

// Of is the run's budget from its tps and clients and its parts' threads, in the path's order;
// nil when the run is not one closed loop (cycleMs nil) or no part's threads were read.
func Of(cycleMs *float64, tps float64, parts []Part) *benchv1.TimeBudget {
	if cycleMs == nil || *cycleMs <= 0 || tps <= 0 {
		return nil
	}
	out := &benchv1.TimeBudget{RoundTripMs: *cycleMs}
	rest := *cycleMs
	for _, p := range parts {
		t, held := p.Threads, p.Held > 0 && p.HeldWindow > 0
		if t != nil && t.WindowSeconds <= 0 {
			t = nil
		}
		if t == nil && !held || len(out.Parts) == maxParts {
			continue
		}
		bp := benchv1.BudgetPart{Part: p.Name}
		if t != nil {
			// A runner that writes nonsense gets no negative share from it.
			perTx := func(busy float64) float64 { return round(1000 * max(busy, 0) / t.WindowSeconds / tps) }
			bp.OnCPUMs, bp.WaitedMs = perTx(t.OnCPUSeconds), perTx(t.WaitedSeconds)
			bp.Threads = int32(min(max(t.Count, 0), math.MaxInt32))
			bp.BusiestThreadCores = round(max(t.BusiestSeconds, 0) / t.WindowSeconds)
		}
		if held {
			bp.HeldMs = round(1000 * p.Held.Seconds() / p.HeldWindow / tps)
		}
		bp.Ms = round(bp.OnCPUMs + bp.WaitedMs + bp.HeldMs)
		if held && p.HeldCoversThreads {
			bp.Ms = round(max(bp.HeldMs, bp.OnCPUMs+bp.WaitedMs))
		}
		if !finite(bp.Ms, bp.BusiestThreadCores, rest-bp.Ms) {
			// Figures past float64's range are no share: the part is left out of the budget.
			continue
		}
		rest -= bp.Ms
		out.Parts = append(out.Parts, bp)
	}
	if len(out.Parts) == 0 {
		return nil
	}
	// Negative when the shares add up to more than the round trip: several threads of one part
	// worked on one transaction at once (a server's parallel workers).
	out.UnattributedMs = round(rest)
	return out
}

// FullCoreLimiter is the first part, in the path's order, one of whose threads was on a CPU for
// FullCore of its window or more; nil when none was. It needs no round trip: a copy's or an open
// loop's single-threaded part at a full core set their pace too.
func FullCoreLimiter(parts []Part) *benchv1.Limiter {
	for _, p := range parts {
		t := p.Threads
		if t == nil || t.WindowSeconds <= 0 {
			continue
		}
		if busiest := t.BusiestSeconds / t.WindowSeconds; busiest >= FullCore && !math.IsInf(busiest, 0) {
			return &benchv1.Limiter{Part: p.Name, Evidence: fmt.Sprintf(
				"one thread of %s was on a CPU %.0f%% of the window (threshold %.0f%% of a core): a thread cannot use more "+
					"than one core, so it set the pace however small %s's share of the node",
				p.Name, 100*min(busiest, 1), 100*FullCore, p.Name)}
		}
	}
	return nil
}

// LatencyLimiter is latency as the limiter of a run in which nothing ran out: the evidence names
// the parts that held the most of the round trip, largest first, and the unattributed rest.
func LatencyLimiter(b *benchv1.TimeBudget) *benchv1.Limiter {
	if b == nil || b.RoundTripMs <= 0 {
		return nil
	}
	parts := slices.Clone(b.Parts)
	slices.SortStableFunc(parts, func(x, y benchv1.BudgetPart) int { return cmp.Compare(y.Ms, x.Ms) })
	var held []string
	for _, p := range parts[:min(len(parts), 3)] {
		how := fmt.Sprintf("%.3g on a CPU, %.3g waiting for one", p.OnCPUMs, p.WaitedMs)
		if p.HeldMs > 0 {
			how = fmt.Sprintf("%.3g held by it, ", p.HeldMs) + how
		}
		held = append(held, fmt.Sprintf("%s %.3g ms (%.0f%%: %s)", p.Part, p.Ms, 100*p.Ms/b.RoundTripMs, how))
	}
	return &benchv1.Limiter{Part: benchv1.PartLatency, Evidence: fmt.Sprintf(
		"no part ran out; of the %.3g ms round trip %s; %.3g ms (%.0f%%) was in none of the measured parts' threads: "+
			"the network, queues inside a part, the parts not measured", b.RoundTripMs, strings.Join(held, ", "),
		b.UnattributedMs, 100*b.UnattributedMs/b.RoundTripMs)}
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return false
		}
	}
	return true
}

// round keeps a microsecond's resolution.
func round(v float64) float64 { return math.Round(v*1000) / 1000 }
