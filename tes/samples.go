package tes

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/internal/linalg"
)

// sampleSet is F_x*, a weighted sample of p(f_X* | y_D, x*) for one x*
// (§4.1): the samples are the rows of F (|F|×|X*|) and W their
// self-normalised weights (summing to 1; all equal for grouping).
type sampleSet struct {
	Star int        // index of x* in X*
	F    *mat.Dense // samples of f_X*, one per row
	W    []float64  // self-normalised weights
}

// ess returns the effective sample size (Σw)²/Σw² of the set.
func (s *sampleSet) ess() float64 {
	var s1, s2 float64
	for _, w := range s.W {
		s1 += w
		s2 += w * w
	}
	if s2 == 0 {
		return 0
	}
	return s1 * s1 / s2
}

// mean returns the weighted sample mean of f_X* and its standard error
// (delta-method standard error of a self-normalised estimator,
// sqrt(Σ w_i² (f_i − f̄)²); with equal weights this is the usual s/√n up
// to the n/(n−1) factor).
func (s *sampleSet) mean() (mean, se []float64) {
	n, k := s.F.Dims()
	mean = make([]float64, k)
	se = make([]float64, k)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			mean[j] += s.W[i] * s.F.At(i, j)
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			d := s.F.At(i, j) - mean[j]
			se[j] += s.W[i] * s.W[i] * d * d
		}
	}
	for j := range se {
		se[j] = math.Sqrt(se[j])
	}
	return mean, se
}

// groupedSampleSets draws n joint samples of f_X* ~ N(mean, cov)
// (= p(f_X* | y_D)) and groups them by their argmax (§4.1, second method):
// the samples whose maximum is at x* form F_x* with equal weights. Maximizers
// that receive no sample are dropped (the paper's rule), so the result may
// hold fewer than |X*| sets; it is ordered by Star.
func groupedSampleSets(rng *rand.Rand, mean []float64, cov mat.Symmetric, n int) ([]sampleSet, error) {
	k := len(mean)
	if cov.SymmetricDim() != k || k == 0 || n <= 0 {
		return nil, fmt.Errorf("tes: grouped samples: bad sizes (mean %d, cov %d, n %d)", k, cov.SymmetricDim(), n)
	}
	kt, _ := symData(cov)
	l := make([]float64, k*k)
	if _, err := linalg.Cholesky(l, kt, k); err != nil {
		return nil, fmt.Errorf("tes: grouped samples: %w", err)
	}
	rows := make([][]float64, k)
	counts := make([]int, k)
	z := make([]float64, k)
	f := make([]float64, k)
	for s := 0; s < n; s++ {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		best := 0
		for i := 0; i < k; i++ {
			v := mean[i]
			for j, lij := range l[i*k : i*k+i+1] {
				v += lij * z[j]
			}
			f[i] = v
			if v > f[best] {
				best = i
			}
		}
		rows[best] = append(rows[best], f...)
		counts[best]++
	}
	var out []sampleSet
	for j := 0; j < k; j++ {
		if counts[j] == 0 {
			continue
		}
		w := make([]float64, counts[j])
		for i := range w {
			w[i] = 1 / float64(counts[j])
		}
		out = append(out, sampleSet{Star: j, F: mat.NewDense(counts[j], k, rows[j]), W: w})
	}
	return out, nil
}

// importanceSampleSets draws, for every x* ∈ X*, n importance samples of
// p(f_X* | y_D, x*) (§4.1, Appendix B): f_\* ~ p(f_\* | y_D), then
// f(x*) ~ p(f(x*) | f_\*, y_D) truncated below at f⁺ = max f_\*, with weight
// p(x* | f_\*, y_D) = 1 − Φ((f⁺ − μ_c)/σ_c), self-normalised within each
// set (reading 2 of the package doc). Weights are handled in log space. If f(x*) is a
// deterministic function of f_\* (σ_c ≈ 0, a near-duplicate maximizer), the
// weight is the indicator μ_c ≥ f⁺; a set whose weights are all zero is
// dropped.
func importanceSampleSets(rng *rand.Rand, mean []float64, cov mat.Symmetric, n int) ([]sampleSet, error) {
	k := len(mean)
	if cov.SymmetricDim() != k || k == 0 || n <= 0 {
		return nil, fmt.Errorf("tes: importance samples: bad sizes (mean %d, cov %d, n %d)", k, cov.SymmetricDim(), n)
	}
	kt, _ := symData(cov)
	perm := make([]int, k)
	pk := make([]float64, k*k)
	l := make([]float64, k*k)
	z := make([]float64, k)
	logw := make([]float64, n)
	var out []sampleSet
	for j := 0; j < k; j++ {
		// Order X* with x* last: the Cholesky factor's last row gives the
		// conditional p(f(x*) | f_\*): mean m_j + L_21 z, sd L_22.
		r := 0
		for i := 0; i < k; i++ {
			if i != j {
				perm[r] = i
				r++
			}
		}
		perm[k-1] = j
		for a := 0; a < k; a++ {
			for b := 0; b < k; b++ {
				pk[a*k+b] = kt[perm[a]*k+perm[b]]
			}
		}
		if _, err := linalg.Cholesky(l, pk, k); err != nil {
			return nil, fmt.Errorf("tes: importance samples for x*_%d: %w", j, err)
		}
		sdc := l[(k-1)*k+k-1]
		degenerate := !(sdc > math.Sqrt(degenerateTol*pk[(k-1)*k+k-1]))
		data := make([]float64, n*k)
		for s := 0; s < n; s++ {
			row := data[s*k : s*k+k]
			fplus := math.Inf(-1)
			for i := 0; i < k-1; i++ {
				z[i] = rng.NormFloat64()
			}
			for a := 0; a < k-1; a++ {
				v := mean[perm[a]]
				for b, lab := range l[a*k : a*k+a+1] {
					v += lab * z[b]
				}
				row[perm[a]] = v
				fplus = math.Max(fplus, v)
			}
			mc := mean[j]
			for b, lb := range l[(k-1)*k : (k-1)*k+k-1] {
				mc += lb * z[b]
			}
			if k == 1 {
				row[j] = mc + sdc*rng.NormFloat64()
				logw[s] = 0
				continue
			}
			if degenerate {
				row[j] = mc
				if mc >= fplus {
					logw[s] = 0
				} else {
					logw[s] = math.Inf(-1)
				}
				continue
			}
			a := (fplus - mc) / sdc
			row[j] = mc + sdc*sampleTruncNormal(rng, a)
			logw[s] = acq.LogPhi(-a) // log(1 − Φ(a))
		}
		lse := logSumExp(logw)
		if math.IsInf(lse, -1) {
			continue
		}
		w := make([]float64, n)
		for s := range w {
			w[s] = math.Exp(logw[s] - lse)
		}
		out = append(out, sampleSet{Star: j, F: mat.NewDense(n, k, data), W: w})
	}
	return out, nil
}
