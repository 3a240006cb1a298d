package acq

// Small dense helpers for the q×q covariance matrices of batch
// acquisitions (q is at most a few tens, so plain loops are fastest).

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
