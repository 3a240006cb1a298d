package bench

import (
	"math"
	"slices"
	"sort"
)

// RegretFloor is the smallest immediate regret the logarithmic outputs
// show: a regret below it (exactly 0, or slightly negative because f* is
// known only to ~1e-12) is taken as RegretFloor and counted in summary.md.
const RegretFloor = 1e-12

// log10Regret is log10(max(r, RegretFloor)).
func log10Regret(r float64) float64 { return math.Log10(math.Max(r, RegretFloor)) }

// mean returns the sample mean (NaN for no values).
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// stdErr returns the standard error of the mean, s/√n with the unbiased
// sample standard deviation s (NaN for fewer than two values).
func stdErr(xs []float64) float64 {
	n := len(xs)
	if n < 2 {
		return math.NaN()
	}
	m := mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
}

// median returns the median (NaN for no values).
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// quantile returns the q-quantile of xs, interpolating linearly between
// order statistics (R's and numpy's default; NaN for no values): 0.5 is
// the median, 0.25 and 0.75 the quartiles.
func quantile(xs []float64, q float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	h := q * float64(n-1)
	i := int(math.Floor(h))
	if i >= n-1 {
		return s[n-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}

// regretCurve is the per-iteration regret statistic of one acquisition's runs:
// at iteration Iter[i], over the N[i] runs that reached it, the median of
// log10 of the immediate regret and its quartiles (what the figures plot,
// on the scale the summary tables rank by: one run stuck far away moves
// neither), and the paper's mean immediate regret with its standard error.
type regretCurve struct {
	Acquisition string
	Iter        []int
	N           []int
	// Median, Q1 and Q3 are quantiles of log10(max(regret, RegretFloor)).
	Median, Q1, Q3 []float64
	Mean, SE       []float64
}

// curve builds the regretCurve of runs (all of one acquisition) up to iters.
func curve(acquisition string, runs []runResult, iters int) regretCurve {
	c := regretCurve{Acquisition: acquisition}
	for t := 1; t <= iters; t++ {
		var rs, logs []float64
		for _, r := range runs {
			if row := rowAt(r, t); row != nil && row.Regret != nil {
				rs = append(rs, *row.Regret)
				logs = append(logs, log10Regret(*row.Regret))
			}
		}
		if len(rs) == 0 {
			continue
		}
		c.Iter = append(c.Iter, t)
		c.N = append(c.N, len(rs))
		c.Median = append(c.Median, median(logs))
		c.Q1 = append(c.Q1, quantile(logs, 0.25))
		c.Q3 = append(c.Q3, quantile(logs, 0.75))
		c.Mean = append(c.Mean, mean(rs))
		c.SE = append(c.SE, stdErr(rs))
	}
	return c
}

// finalRegret returns a run's regret at iteration iters, if it got there.
// A failed run has none even if it holds that iteration: it is reported
// with the failures (summary.md, exit status), never as a complete run.
func finalRegret(r runResult, iters int) (float64, bool) {
	return finalOf(r, iters, func(row *row) *float64 { return row.Regret })
}

// finalBestEval is finalRegret for the best-evaluated regret (the user's
// rule).
func finalBestEval(r runResult, iters int) (float64, bool) {
	return finalOf(r, iters, func(row *row) *float64 { return row.BestEvalRegret })
}

// finalOf returns the field of the run's row at iteration iters that field
// selects, unless the run failed or the row or the field is missing.
func finalOf(r runResult, iters int, field func(*row) *float64) (float64, bool) {
	if r.Status == StatusFailed {
		return 0, false
	}
	row := rowAt(r, iters)
	if row == nil || field(row) == nil {
		return 0, false
	}
	return *field(row), true
}

// rowAt returns the run's row of iteration t, or nil.
func rowAt(r runResult, t int) *row {
	if t >= 1 && t <= len(r.Rows) && r.Rows[t-1].Iter == t {
		return &r.Rows[t-1]
	}
	for i := range r.Rows {
		if r.Rows[i].Iter == t {
			return &r.Rows[i]
		}
	}
	return nil
}
