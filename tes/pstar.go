package tes

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// MaximizerProbs is p(x* | y_D) for every x* ∈ X* (Appendix A).
type MaximizerProbs struct {
	// P holds the normalised probabilities (summing to 1).
	P []float64
	// Raw holds the orthant probabilities before normalisation and SE their
	// estimated standard errors (randomized QMC).
	Raw, SE []float64
	// RawSum = Σ Raw, which is 1 in exact arithmetic; RawSumSE is its
	// standard error (the estimates are independent), so |RawSum − 1| is
	// within a few RawSumSE unless the estimator is broken.
	RawSum, RawSumSE float64
}

// Entropy returns H(x*) = −Σ p log p, the upper bound of the TES
// information gain (nats).
func (m *MaximizerProbs) Entropy() float64 { return entropy(m.P) }

func entropy(p []float64) float64 {
	h := 0.0
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}

// MaximizerProbabilities computes p(x*|y_D) = P(f(x_i) − f(x*) ≤ 0 ∀ i ≠ x*)
// for f_X* ~ N(mean, cov) (Appendix A, with only the |X*|−1 difference rows
// of J, reading 1 of the package doc), each by Genz's randomized QMC
// estimator with variable reordering, then normalises them to sum to 1
// (reading 3). Near-duplicate maximizers make some differences (nearly) degenerate;
// the estimator treats those as deterministic constraints.
func MaximizerProbabilities(rng *rand.Rand, mean []float64, cov mat.Symmetric, s MVNSettings) (*MaximizerProbs, error) {
	k := len(mean)
	if k == 0 || cov.SymmetricDim() != k {
		return nil, fmt.Errorf("tes: maximizer probabilities: mean has %d entries, covariance is %d×%d", k, cov.SymmetricDim(), cov.SymmetricDim())
	}
	kt, _ := symData(cov)
	if !allFinite(kt) || !allFinite(mean) {
		return nil, fmt.Errorf("tes: maximizer probabilities: non-finite prior moments")
	}
	out := &MaximizerProbs{P: make([]float64, k), Raw: make([]float64, k), SE: make([]float64, k)}
	if k == 1 {
		out.P[0], out.Raw[0], out.RawSum = 1, 1, 1
		return out, nil
	}
	// One independent stream per x*, drawn up front, so the result does not
	// depend on scheduling; the k integrals run in parallel.
	seeds := make([][2]uint64, k)
	for j := range seeds {
		seeds[j] = [2]uint64{rng.Uint64(), rng.Uint64()}
	}
	n := k - 1
	parallel(k, func(j int) {
		sig := make([]float64, n*n)
		b := make([]float64, n)
		idx := make([]int, 0, n)
		// d_r = f_{i_r} − f_j ~ N(m_{i_r} − m_j, J K̃ Jᵀ); want P(d ≤ 0).
		for i := 0; i < k; i++ {
			if i != j {
				idx = append(idx, i)
			}
		}
		for r, i := range idx {
			b[r] = -(mean[i] - mean[j])
			for c, i2 := range idx {
				sig[r*n+c] = kt[i*k+i2] - kt[i*k+j] - kt[j*k+i2] + kt[j*k+j]
			}
		}
		r := rand.New(rand.NewPCG(seeds[j][0], seeds[j][1]))
		out.Raw[j], out.SE[j] = mvnCDF(r, sig, n, b, s)
	})
	var varSum float64
	for j := 0; j < k; j++ {
		out.RawSum += out.Raw[j]
		varSum += out.SE[j] * out.SE[j]
	}
	out.RawSumSE = math.Sqrt(varSum)
	if !(out.RawSum > 0) {
		return nil, fmt.Errorf("tes: maximizer probabilities are all zero (degenerate prior?)")
	}
	for j := range out.P {
		out.P[j] = out.Raw[j] / out.RawSum
	}
	return out, nil
}
