package tes

import (
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
)

// The information gain of a Gaussian-mixture predictive (the TES_ep and
// TES_sp forms of α(B) in §4.1, §4.2 and §4.3):
//
//	α = Σ_i p_i E_{y ~ q_i}[ log q_i(y) − log Σ_j p_j q_j(y) ].
//
// The expectation under each component is taken over fixed base points
// (Gauss–Hermite nodes for small q, antithetic Monte-Carlo draws otherwise):
// y = m_i + L_i z with L_i the Cholesky factor of component i's covariance,
// so α is a deterministic, differentiable function of the batch. The
// log-ratio log q_i(y) − log q(y) = −log Σ_j p_j q_j(y)/q_i(y) is averaged
// directly rather than subtracting a Monte-Carlo log q(y) from the
// closed-form entropy of q_i: the two are equal in expectation, but in the
// ratio the χ²-distributed |z|² of log q_i cancels, which removes most of the
// estimator's variance. It also makes each term lie in [0, −log p_i], so the
// estimate obeys 0 ≤ α ≤ H(x*) up to the (small) negative excursions of
// the ratio's logarithm — exactly the information-theoretic bounds.

// basePoints are fixed standard-normal base points for one component: the
// q×n row-major matrix Z (column = point) and weights W summing to 1. With
// Pairs, columns 2m and 2m+1 are antithetic (z, −z); Quad marks a
// Gauss–Hermite rule (no sampling error).
type basePoints struct {
	Z     []float64
	W     []float64
	N     int
	Pairs bool
	Quad  bool
}

// ghBase returns the tensor-product Gauss–Hermite rule with `nodes` nodes per
// dimension for N(0, I_q): E[h(z)] ≈ Σ w h(z).
func ghBase(q, nodes int) basePoints {
	x := make([]float64, nodes)
	w := make([]float64, nodes)
	quad.Hermite{}.FixedLocations(x, w, math.Inf(-1), math.Inf(1))
	// Weight e^{−x²}: E_{N(0,1)}[h] = Σ w/√π h(√2 x).
	for i := range x {
		x[i] *= math.Sqrt2
		w[i] /= math.SqrtPi
	}
	n := 1
	for i := 0; i < q; i++ {
		n *= nodes
	}
	b := basePoints{Z: make([]float64, q*n), W: make([]float64, n), N: n, Quad: true}
	idx := make([]int, q)
	for c := 0; c < n; c++ {
		wt := 1.0
		for r := 0; r < q; r++ {
			b.Z[r*n+c] = x[idx[r]]
			wt *= w[idx[r]]
		}
		b.W[c] = wt
		for r := 0; r < q; r++ { // odometer
			idx[r]++
			if idx[r] < nodes {
				break
			}
			idx[r] = 0
		}
	}
	return b
}

// mcBase returns n (rounded up to even) antithetic standard-normal draws in
// q dimensions with equal weights.
func mcBase(rng *rand.Rand, q, n int) basePoints {
	if n < 2 {
		n = 2
	}
	n += n % 2
	b := basePoints{Z: make([]float64, q*n), W: make([]float64, n), N: n, Pairs: true}
	for c := 0; c < n; c += 2 {
		for r := 0; r < q; r++ {
			v := rng.NormFloat64()
			b.Z[r*n+c] = v
			b.Z[r*n+c+1] = -v
		}
	}
	for c := range b.W {
		b.W[c] = 1 / float64(n)
	}
	return b
}

// mixResult is an information-gain value, its Monte-Carlo standard error
// (0 for quadrature) and, when requested, ∂α/∂A (q×k) and the symmetric
// ∂α/∂S (q×q).
type mixResult struct {
	Alpha, SE float64
	GA, GS    []float64
}

// bufPool recycles the |F|×|F| scratch matrices of denseAll (megabytes per
// evaluation otherwise left to the garbage collector).
var bufPool sync.Pool

func getBuf(n int) []float64 {
	if b, ok := bufPool.Get().(*[]float64); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]float64, n)
}

func putBuf(b []float64) { bufPool.Put(&b) }
