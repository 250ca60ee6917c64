package summary

import (
	"fmt"
	"sort"
	"strings"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
)

// PartCost is one part's CPU per transaction over a transport's runs: the median with the same
// distribution-free interval as the rate's.
type PartCost struct {
	Part string `json:"part"`
	// MicrosPerTransaction over the runs that measured the part.
	Median             float64 `json:"median"`
	Low                float64 `json:"low,omitempty"`
	High               float64 `json:"high,omitempty"`
	IntervalConfidence float64 `json:"intervalConfidence,omitempty"`
	Runs               int     `json:"runs"`
	// Limited counts the runs this part limited.
	Limited int `json:"limited,omitempty"`
}

// costOf is each measured part's CPU per transaction, in the order the runs list the parts, and
// the limiter over the runs: "client 3/3", "none found (client)" when no measured part ran out,
// "" when nothing was measured.
func costOf(runs []benchv1.RunResult) ([]PartCost, string) {
	perPart := map[string][]float64{}
	limited := map[string]int{}
	var order []string
	measured := 0
	for _, run := range runs {
		if len(run.Cost) > 0 {
			measured++
		}
		for _, p := range run.Cost {
			if p.CPUMicrosPerTransaction == nil {
				continue
			}
			if _, seen := perPart[p.Part]; !seen {
				order = append(order, p.Part)
			}
			perPart[p.Part] = append(perPart[p.Part], *p.CPUMicrosPerTransaction)
		}
		if run.Limiter != nil {
			limited[run.Limiter.Part]++
		}
	}
	var out []PartCost
	for _, part := range order {
		values := perPart[part]
		c := PartCost{Part: part, Median: stats.Summarize(values).Median, Runs: len(values), Limited: limited[part]}
		if ci := stats.MedianCI(values); ci.Confidence > 0 {
			c.Low, c.High, c.IntervalConfidence = ci.Low, ci.High, ci.Confidence
		}
		out = append(out, c)
	}
	return out, limiterOf(limited, measured, order)
}

func limiterOf(limited map[string]int, measured int, parts []string) string {
	if measured == 0 {
		return ""
	}
	if len(limited) == 0 {
		return "none found (" + strings.Join(parts, ", ") + ")"
	}
	names := make([]string, 0, len(limited))
	for name := range limited {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		out = append(out, fmt.Sprintf("%s %d/%d", name, limited[name], measured))
	}
	return strings.Join(out, ", ")
}

// Unmeasured is a part whose CPU Runs of the transport's runs could not measure, and why.
type Unmeasured struct {
	Part   string `json:"part"`
	Runs   int    `json:"runs"`
	Reason string `json:"reason"`
}

// unmeasuredOf gathers the runs' unmeasured parts, in the order first seen, with the first reason.
func unmeasuredOf(runs []benchv1.RunResult) []Unmeasured {
	var out []Unmeasured
	index := map[string]int{}
	for _, run := range runs {
		for _, u := range run.Unmeasured {
			i, seen := index[u.Part]
			if !seen {
				i = len(out)
				index[u.Part] = i
				out = append(out, Unmeasured{Part: u.Part, Reason: u.Reason})
			}
			out[i].Runs++
		}
	}
	return out
}

// Wire is a transport's bytes on the network (both directions) per transaction, or per row of a
// copy, over the runs that counted them: the median with the rate's interval method.
type Wire struct {
	// Per is what the bytes are counted per: transaction or row.
	Per string `json:"per"`
	Estimate
}

// wireOf is the runs' bytes per transaction (per row for a copy), nil when none counted them.
func wireOf(runs []benchv1.RunResult) *Wire {
	var values []float64
	per := ""
	for _, run := range runs {
		switch w := run.Wire; {
		case w == nil:
		case w.BytesPerTransaction != nil:
			values, per = append(values, *w.BytesPerTransaction), "transaction"
		case w.BytesPerRow != nil:
			values, per = append(values, *w.BytesPerRow), "row"
		}
	}
	if len(values) == 0 {
		return nil
	}
	return &Wire{Per: per, Estimate: *estimate(values)}
}

// Setup is a transport's connection setup, phase by phase: the median of its runs' medians.
type Setup struct {
	Runs      int     `json:"runs"`
	ResolveMs float64 `json:"resolveMs"`
	TCPMs     float64 `json:"tcpMs"`
	TLSMs     float64 `json:"tlsMs"`
	StartupMs float64 `json:"startupMs"`
	TotalMs   float64 `json:"totalMs"`
}

// setupOf is the runs' connection setup, nil when none probed it.
func setupOf(runs []benchv1.RunResult) *Setup {
	var resolve, tcp, handshake, startup, total []float64
	for _, run := range runs {
		if s := run.Setup; s != nil {
			resolve, tcp = append(resolve, s.ResolveMs), append(tcp, s.TCPMs)
			handshake, startup, total = append(handshake, s.TLSMs), append(startup, s.StartupMs), append(total, s.TotalMs)
		}
	}
	if len(total) == 0 {
		return nil
	}
	return &Setup{Runs: len(total), ResolveMs: stats.Median(resolve), TCPMs: stats.Median(tcp), TLSMs: stats.Median(handshake),
		StartupMs: stats.Median(startup), TotalMs: stats.Median(total)}
}

// Budget is a transport's round trip split by where it went (runs[].budget), each figure the
// median over the Runs that have a budget.
type Budget struct {
	Runs        int     `json:"runs"`
	RoundTripMs float64 `json:"roundTripMs"`
	// Parts are each part's share in ms per transaction, in the order the runs list them.
	Parts          []BudgetShare `json:"parts"`
	UnattributedMs float64       `json:"unattributedMs"`
}

// BudgetShare is one part's median share of the round trip.
type BudgetShare struct {
	Part string  `json:"part"`
	Ms   float64 `json:"ms"`
}

// BudgetOf is the runs' budgets' medians, nil when no run has one.
func BudgetOf(runs []benchv1.RunResult) *Budget {
	var roundTrips, rest []float64
	perPart := map[string][]float64{}
	var order []string
	for _, run := range runs {
		b := run.Budget
		if b == nil {
			continue
		}
		roundTrips, rest = append(roundTrips, b.RoundTripMs), append(rest, b.UnattributedMs)
		for _, p := range b.Parts {
			if _, seen := perPart[p.Part]; !seen {
				order = append(order, p.Part)
			}
			perPart[p.Part] = append(perPart[p.Part], p.Ms)
		}
	}
	if len(roundTrips) == 0 {
		return nil
	}
	out := &Budget{Runs: len(roundTrips), RoundTripMs: stats.Summarize(roundTrips).Median,
		UnattributedMs: stats.Summarize(rest).Median}
	for _, part := range order {
		out.Parts = append(out.Parts, BudgetShare{Part: part, Ms: stats.Summarize(perPart[part]).Median})
	}
	return out
}
