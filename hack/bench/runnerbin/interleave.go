package runnerbin

import "fmt"

// Kind is one kind of run of an A/B benchmark: its name and what one run of it measures (tps).
type Kind struct {
	Name string
	Run  func() (float64, error)
}

// Interleave runs a and b rounds times each, a→b in odd rounds and b→a in even ones, so that drift
// and warm-up hit both alike, printing a markdown row per round (its figures and b/a); it returns
// both series.
func Interleave(rounds int, a, b Kind) (as, bs []float64, err error) {
	fmt.Printf("| round | order | %s tps | %s tps | %s/%s |\n|---|---|---|---|---|\n", a.Name, b.Name, b.Name, a.Name)
	for i := range rounds {
		order := []Kind{a, b}
		if i%2 == 1 {
			order = []Kind{b, a}
		}
		got := map[string]float64{}
		for _, k := range order {
			if got[k.Name], err = k.Run(); err != nil {
				return nil, nil, fmt.Errorf("round %d, %s: %w", i+1, k.Name, err)
			}
		}
		as, bs = append(as, got[a.Name]), append(bs, got[b.Name])
		fmt.Printf("| %d | %s→%s | %.0f | %.0f | %.3f |\n", i+1, order[0].Name, order[1].Name, got[a.Name], got[b.Name],
			got[b.Name]/got[a.Name])
	}
	return as, bs, nil
}
