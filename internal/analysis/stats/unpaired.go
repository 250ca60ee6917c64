package stats

import "math"

// UnpairedRatio compares the rates of two independent sets of runs, such as two benchmarks of the
// same transport before and after a change, where no run of one is the pair of a run of the other.
// It is Welch's t interval on the difference of the mean log rates,
//
//	exp(mean(ln b) − mean(ln a) ± t_{0.975, ν} · √(s²_a/n_a + s²_b/n_b)),
//
// with the Welch–Satterthwaite degrees of freedom ν rounded down (a wider interval, never a
// narrower one): Welch (1947), "The generalization of 'Student's' problem when several different
// population variances are involved", Biometrika 34. Above 1, b is faster. Without two runs on
// each side there is no interval.
func UnpairedRatio(a, b []float64) (Ratio, error) {
	if len(a) == 0 || len(b) == 0 {
		return Ratio{}, ErrEmpty
	}
	la, err := logs("a", a)
	if err != nil {
		return Ratio{}, err
	}
	lb, err := logs("b", b)
	if err != nil {
		return Ratio{}, err
	}
	ma, sa := meanStdDev(la)
	mb, sb := meanStdDev(lb)
	d := mb - ma
	r := Ratio{Estimate: math.Exp(d), N: min(len(a), len(b)), LogMean: d}
	if len(a) < 2 || len(b) < 2 {
		return r, nil
	}
	va, vb := sa*sa/float64(len(a)), sb*sb/float64(len(b))
	se := math.Sqrt(va + vb)
	df := len(a) + len(b) - 2
	if va+vb > 0 {
		nu := (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
		df = max(1, int(math.Floor(nu)))
	}
	h := TCritical95(df) * se
	r.Low, r.High, r.HasInterval, r.LogSE, r.DF = math.Exp(d-h), math.Exp(d+h), true, se, df
	return r, nil
}

func logs(side string, xs []float64) ([]float64, error) {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if err := checkPositive(side, i, x); err != nil {
			return nil, err
		}
		out[i] = math.Log(x)
	}
	return out, nil
}
