// Package cost turns what each part of a path consumed during a run's measured window into the
// figures status keeps (CPU per transaction, utilization of what the part could use, throttling),
// and names the part that ran out first by documented thresholds. Pure: the caller reads the
// accounting and the cores.
package cost

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
)

// Thresholds of the limiter verdict.
const (
	// SaturatedUtilization: a part that used this share of the CPU it could use (its limit, or its
	// node's allocatable cores) during the window had none to spare. Below 1 because the window's
	// ends, the runner's own idle moments and the kernel's accounting granularity keep a
	// saturated part a few percent short of 1.
	SaturatedUtilization = 0.9
	// ThrottledShare: a part under a CPU limit that ran out of its quota in this share of the
	// scheduler's periods waited for CPU often enough to set the pace, whatever its average.
	ThrottledShare = 0.1
	// RTTBoundShare: in a closed loop each client waits at least one round trip per transaction,
	// so tps × RTT ≤ clients; a run at this share of that bound or above is paced by the link.
	RTTBoundShare = 0.8
	// PoolWaitShare: a pooler's clients that waited this share of their time for a server
	// connection found every one busy that long; more connections would have served them. In a
	// closed loop of c clients over p connections each client waits 1 - p/c of its time (p < c),
	// so the pool is named from c = 1.11 p on, and never while c <= p.
	PoolWaitShare = 0.1
)

// Part is one part's cost from its accounting over the window: cores is the CPU it could use
// (0 when not known: no utilization then), transactions the run's count.
func Part(name string, cpu *report.CPU, transactions int64, cores float64) benchv1.PartCost {
	used := cpu.UserSeconds + cpu.SystemSeconds
	out := benchv1.PartCost{Part: name, CPUSeconds: round(used, 4)}
	if transactions > 0 {
		out.CPUMicrosPerTransaction = ptr.To(round(used/float64(transactions)*1e6, 3))
	}
	if cores > 0 && cpu.WindowSeconds > 0 {
		out.Cores = ptr.To(round(cores, 3))
		out.Utilization = ptr.To(round(used/(cpu.WindowSeconds*cores), 3))
	}
	if cpu.Periods > 0 {
		out.ThrottledFraction = ptr.To(round(float64(cpu.Throttled)/float64(cpu.Periods), 3))
		out.ThrottledSeconds = ptr.To(round(cpu.ThrottledSeconds, 3))
	}
	return out
}

// Limiter is the first part, in the order given (the client first: what it cannot send, no hop
// behind it sees), that ran out: throttled in ThrottledShare of its periods, or at
// SaturatedUtilization of what it could use. Nil when none did.
func Limiter(parts []benchv1.PartCost) *benchv1.Limiter {
	for _, p := range parts {
		switch {
		case p.ThrottledFraction != nil && *p.ThrottledFraction >= ThrottledShare:
			return &benchv1.Limiter{Part: p.Part, Evidence: fmt.Sprintf(
				"%s ran out of its CPU limit in %.0f%% of the scheduler's periods (threshold %.0f%%), waiting %.2f s in all",
				p.Part, 100**p.ThrottledFraction, 100*ThrottledShare, *p.ThrottledSeconds)}
		case p.Utilization != nil && *p.Utilization >= SaturatedUtilization:
			return &benchv1.Limiter{Part: p.Part, Evidence: fmt.Sprintf(
				"%s used %.0f%% of the %.2g cores it could use (threshold %.0f%%)",
				p.Part, 100**p.Utilization, *p.Cores, 100*SaturatedUtilization)}
		}
	}
	return nil
}

// Network is the link as the limiter when the run reached RTTBoundShare of the closed loop's
// bound, clients / RTT (the link measured before the load); nil otherwise, or without a link. A
// transaction of several round trips reaches a fraction of it and is not recognized here.
func Network(tps, rttMs float64, clients int) *benchv1.Limiter {
	if rttMs <= 0 || clients <= 0 || tps <= 0 {
		return nil
	}
	bound := float64(clients) / (rttMs / 1000)
	if share := tps / bound; share >= RTTBoundShare {
		return &benchv1.Limiter{Part: benchv1.PartNetwork, Evidence: fmt.Sprintf(
			"%.0f tps is %.0f%% of %d clients / %.3g ms measured RTT = %.0f tps, the most a closed loop of one round trip "+
				"per transaction can reach (threshold %.0f%%)", tps, 100*share, clients, rttMs, bound, 100*RTTBoundShare)}
	}
	return nil
}

// Pool is a pooler's pool of server connections as the limiter: its clients waited PoolWaitShare
// of their time or more for one (the pooler's own count of their wait, over clients × the load's
// window), so every server connection was busy while clients queued. Nil otherwise, or when the
// pooler does not count its wait. A pooler that ran out of CPU is named by Limiter before this.
func Pool(part string, waitSeconds, windowSeconds float64, clients, servers int) *benchv1.Limiter {
	if windowSeconds <= 0 || clients <= 0 || waitSeconds <= 0 {
		return nil
	}
	share := waitSeconds / (float64(clients) * windowSeconds)
	if share < PoolWaitShare {
		return nil
	}
	return &benchv1.Limiter{Part: part, Evidence: fmt.Sprintf(
		"%d clients waited %.2f s in all for one of %s's %d server connections over the %.1f s load: %.0f%% of their time "+
			"(threshold %.0f%%); the pool was exhausted, more server connections would have served them",
		clients, waitSeconds, part, servers, windowSeconds, 100*min(share, 1), 100*PoolWaitShare)}
}

func round(v float64, digits int) float64 {
	f := math.Pow(10, float64(digits))
	return math.Round(v*f) / f
}

// Shared is one part's CPU on a node that several parts share, for Node.
type Shared struct {
	Part       string
	CPUSeconds float64
}

// Node is the runner's node as the limiter: the parts that ran on it used SaturatedUtilization of
// its cores together over the window, though none ran out alone (Limiter names that one first).
// Nil when they did not, or the node's cores or the window are not known.
func Node(node string, parts []Shared, window, cores float64) *benchv1.Limiter {
	if cores <= 0 || window <= 0 || len(parts) < 2 {
		return nil
	}
	sum := 0.0
	var each []string
	for _, p := range parts {
		sum += p.CPUSeconds
		each = append(each, fmt.Sprintf("%s %.0f%%", p.Part, 100*p.CPUSeconds/(window*cores)))
	}
	share := sum / (window * cores)
	if share < SaturatedUtilization {
		return nil
	}
	return &benchv1.Limiter{Part: benchv1.PartNode, Evidence: fmt.Sprintf(
		"the parts on node %s used %.0f%% of its %.2g cores together (%s; threshold %.0f%%): they competed for one node's CPU",
		node, 100*share, cores, strings.Join(each, ", "), 100*SaturatedUtilization)}
}
