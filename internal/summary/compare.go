package summary

import (
	"github.com/tunnelbench/tunnelbench/internal/stats"
)

// Comparison sets two benchmarks of the same transports side by side (before and after a change).
type Comparison struct {
	Before, After string
	Unit          string
	Transports    []Change `json:"transports"`
	// Regressions names the transports significantly slower after than before.
	Regressions []string `json:"regressions,omitempty"`
}

// Change is one transport's before and after. Ratio is after/before of the medians' geometric
// means with Welch's 95 % interval (the runs of two benchmarks are not pairs).
type Change struct {
	Name      string  `json:"name"`
	Before    float64 `json:"before"`
	After     float64 `json:"after"`
	Ratio     float64 `json:"ratio"`
	RatioLow  float64 `json:"ratioLow,omitempty"`
	RatioHigh float64 `json:"ratioHigh,omitempty"`
	Verdict   string  `json:"verdict"`
	Reason    string  `json:"reason"`
}

// Compare compares the transports both benchmarks ran, in before's order.
func Compare(before, after Summary) Comparison {
	c := Comparison{Before: before.Namespace + "/" + before.Name, After: after.Namespace + "/" + after.Name, Unit: after.Unit}
	runs := map[string][]float64{}
	for _, t := range after.Transports {
		runs[t.Name] = t.PerRun
	}
	for _, t := range before.Transports {
		a, ok := runs[t.Name]
		if !ok || len(a) == 0 || len(t.PerRun) == 0 {
			continue
		}
		ch := Change{Name: t.Name, Before: stats.Median(t.PerRun), After: stats.Median(a)}
		r, err := stats.UnpairedRatio(t.PerRun, a)
		if err != nil {
			ch.Verdict, ch.Reason = string(stats.Indistinguishable), err.Error()
		} else {
			ch.Ratio, ch.RatioLow, ch.RatioHigh = r.Estimate, r.Low, r.High
			ch.Verdict, ch.Reason = string(r.Verdict()), r.Reason()
		}
		if ch.Verdict == string(stats.Slower) {
			c.Regressions = append(c.Regressions, t.Name)
		}
		c.Transports = append(c.Transports, ch)
	}
	return c
}
