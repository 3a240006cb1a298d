package acq

import (
	"fmt"
	"math"
)

// Small dense helpers for the q×q covariance matrices of batch
// acquisitions (q is at most a few tens, so plain loops are fastest).

// cholJitter factorizes the symmetric n×n row-major a (lower triangle read)
// as L Lᵀ = a + τI, trying τ = 0 and then τ = 1e-12…1e-4 times the mean
// diagonal, and writes L into l (lower triangle; the upper is zeroed). It
// returns τ, or an error if a stays indefinite.
func cholJitter(l, a []float64, n int) (float64, error) {
	scale := 0.0
	for i := 0; i < n; i++ {
		scale += math.Abs(a[i*n+i])
	}
	scale = math.Max(scale/float64(n), 1e-300)
	tau := 0.0
	for try := 0; try < 10; try++ {
		if cholesky(l, a, n, tau) {
			return tau, nil
		}
		if tau == 0 {
			tau = 1e-12 * scale
		} else {
			tau *= 10
		}
	}
	return tau, fmt.Errorf("batch covariance is not positive definite even with jitter %.3g", tau)
}

// cholesky attempts L Lᵀ = a + τI; it reports false on a non-positive pivot.
func cholesky(l, a []float64, n int, tau float64) bool {
	for i := range l[:n*n] {
		l[i] = 0
	}
	for j := 0; j < n; j++ {
		s := a[j*n+j] + tau
		for k := 0; k < j; k++ {
			s -= l[j*n+k] * l[j*n+k]
		}
		if !(s > 0) {
			return false
		}
		ljj := math.Sqrt(s)
		l[j*n+j] = ljj
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := 0; k < j; k++ {
				s -= l[i*n+k] * l[j*n+k]
			}
			l[i*n+j] = s / ljj
		}
	}
	return true
}

// cholBackward returns the symmetric gradient G = ∂loss/∂Σ (n×n row-major,
// valid for symmetric perturbations of Σ) given L with L Lᵀ = Σ and
// lbar = ∂loss/∂L (only the lower triangle is read):
//
//	G = L⁻ᵀ sym(Φ(Lᵀ L̄)) L⁻¹,
//
// where Φ keeps the lower triangle and halves the diagonal and
// sym(A) = (A + Aᵀ)/2. (From dL = L Φ(L⁻¹ dΣ L⁻ᵀ); cf. Murray 2016,
// "Differentiation of the Cholesky decomposition".)
func cholBackward(l, lbar []float64, n int) []float64 {
	// P = Φ(Lᵀ L̄): (Lᵀ L̄)_ij = Σ_k L_ki L̄_kj over k ≥ max(i, j).
	p := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s := 0.0
			for k := i; k < n; k++ {
				s += l[k*n+i] * lbar[k*n+j]
			}
			if i == j {
				s *= 0.5
			}
			p[i*n+j] = s
		}
	}
	// Symmetrize.
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			v := 0.5 * p[i*n+j]
			p[i*n+j], p[j*n+i] = v, v
		}
	}
	// G = L⁻ᵀ P L⁻¹: solve Lᵀ W = P (W = L⁻ᵀ P), then G L = W, i.e.
	// Lᵀ Gᵀ = Wᵀ; G is symmetric, so solve Lᵀ G = Wᵀ column by column.
	w := p
	for c := 0; c < n; c++ { // back substitution on column c: Lᵀ w_c = p_c
		for i := n - 1; i >= 0; i-- {
			s := w[i*n+c]
			for k := i + 1; k < n; k++ {
				s -= l[k*n+i] * w[k*n+c]
			}
			w[i*n+c] = s / l[i*n+i]
		}
	}
	g := make([]float64, n*n)
	for c := 0; c < n; c++ { // back substitution: Lᵀ g_c = (Wᵀ)_c = row c of W
		for i := n - 1; i >= 0; i-- {
			s := w[c*n+i]
			for k := i + 1; k < n; k++ {
				s -= l[k*n+i] * g[k*n+c]
			}
			g[i*n+c] = s / l[i*n+i]
		}
	}
	// Symmetrize against round-off.
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			v := 0.5 * (g[i*n+j] + g[j*n+i])
			g[i*n+j], g[j*n+i] = v, v
		}
	}
	return g
}
