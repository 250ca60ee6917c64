// Package stats turns repeated benchmark rounds into a comparison that says how sure it is.
//
// A transport's throughput is measured R times (1 to 20 repetitions), interleaved round-robin with
// a baseline transport, so round i of the candidate and round i of the baseline ran back to back
// against the same server, the same cache state and the same neighbours. The package compares them
// as pairs, not as two independent groups, because that shared round-to-round drift is most of the
// variance of a pgbench run: pairing cancels it, and the interval reflects only how consistently the
// candidate beats or trails the baseline within a round. This is the paired t-test of Student (1908),
// "The probable error of a mean", Biometrika 6(1), and of the NIST/SEMATECH e-Handbook of
// Statistical Methods, sections 7.2.2 and 7.3.1.
//
// Throughput ratios are multiplicative: "20 % faster" and "20 % slower" are not mirror images on
// a linear scale, and round-to-round noise scales with the rate. So the test runs on the
// log-ratios d_i = ln(c_i/b_i), where ratios become differences (Keene (1995), "The log
// transformation is special", Statistics in Medicine 14). The mean and the interval are computed
// there and mapped back with exp: the estimate is the geometric mean of the per-round ratios, and
// the interval is symmetric in log space, not around the estimate. A consequence the callers can
// rely on is that swapping baseline and candidate inverts the interval: [L, H] becomes [1/H, 1/L].
//
// The interval is Student's t interval rather than a bootstrap. With n ≤ 20 pairs, and 3 to 5 in
// the common case, a percentile bootstrap cannot reach its nominal 95 % coverage: n pairs admit at
// most n^n resamples (27 for n = 3), their spread underestimates the sampling spread by about
// sqrt((n-1)/n) and ignores the uncertainty of the variance itself, so its intervals come out too
// narrow and "faster" would be claimed too often (Efron & Tibshirani (1993), An Introduction to the
// Bootstrap, chapter 13, on the small-sample coverage of percentile intervals). The t interval's
// extra width at small n is exactly the price of estimating the variance from a few rounds; its
// assumption, roughly normal log-ratios, is a mild one for throughput measured over minutes.
//
// The package is pure computation, with no I/O and no dependency on the operator, so that the same
// figures can be recomputed from a report outside the cluster.
package stats
