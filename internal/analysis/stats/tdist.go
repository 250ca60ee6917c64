package stats

import "math"

// t975 holds t_{0.975, df}, the two-sided 95 % critical values of Student's t distribution, as
// published in the NIST/SEMATECH e-Handbook of Statistical Methods, section 1.3.6.7.2, "Critical
// Values of the Student's t Distribution" (column 0.975, upper tail 0.025). A table rather than a
// quantile function because the package needs only this one level and a handful of degrees of
// freedom, and published figures can be checked by eye; the tests check them against the exact
// distribution function as well. Index is df; index 0 is unused.
var t975 = [...]float64{
	0,
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, // df 1-10
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, // df 11-20
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042, // df 21-30
}

// t975Sparse continues t975 past df 30 with rows of the same NIST table.
var t975Sparse = []struct {
	df int
	t  float64
}{
	{40, 2.021},
	{50, 2.009},
	{60, 2.000},
	{80, 1.990},
	{100, 1.984},
}

// TCritical95 returns t_{0.975, df}, the factor that turns a standard error on df degrees of
// freedom into the half-width of a two-sided 95 % interval. Degrees of freedom 1 to 30 are
// tabulated exactly. Between the sparse rows above 30 it returns the row of the next lower
// tabulated df, and above 100 the df = 100 value 1.984 rather than the normal 1.960: t falls as df
// grows, so the interval can come out slightly wide, never narrow. Repetitions stop at 20 (df 19),
// so this matters only to other callers. It returns NaN for df < 1, where no interval exists.
func TCritical95(df int) float64 {
	switch {
	case df < 1:
		return math.NaN()
	case df < len(t975):
		return t975[df]
	}
	t := t975[len(t975)-1]
	for _, row := range t975Sparse {
		if row.df > df {
			break
		}
		t = row.t
	}
	return t
}
