// Package stats holds the summary statistics the benchmark programs print.
package stats

import "sort"

// Median returns the median of xs (0 for none): interleaved rounds on 2 cores swing too much for
// a mean.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
