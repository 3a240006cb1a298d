package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// CholeskyVJP returns the symmetric gradient C̄ = ∂ℓ/∂C (n×n row-major) of a
// scalar ℓ with respect to C = L Lᵀ, given the factor L and L̄ = ∂ℓ/∂L.
// Only the lower triangle of gL is read, and gL is overwritten. With Φ(·)
// the lower triangle with its diagonal halved, dL = L Φ(L⁻¹ dC L⁻ᵀ), so
//
//	C̄ = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹,
//
// symmetrised because dC is (Murray 2016, "Differentiation of the Cholesky
// decomposition"). It is the reverse pass of every q×q predictive
// covariance the batch acquisitions factor.
func CholeskyVJP(l, gL []float64, n int) []float64 {
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			gL[i*n+j] = 0
		}
	}
	p := make([]float64, n*n)
	sq := func(d []float64) blas64.General { return blas64.General{Rows: n, Cols: n, Stride: n, Data: d} }
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, sq(l), sq(gL), 0, sq(p)) // Lᵀ L̄
	for i := 0; i < n; i++ {
		p[i*n+i] *= 0.5
		for j := i + 1; j < n; j++ {
			p[i*n+j] = 0
		}
	}
	// C̄ = L⁻ᵀ P L⁻¹ = L⁻ᵀ (L⁻ᵀ Pᵀ)ᵀ.
	transposeSquare(p, n)
	SolveLowerT(l, n, p, n) // L⁻ᵀ Pᵀ
	transposeSquare(p, n)   // P L⁻¹
	SolveLowerT(l, n, p, n) // L⁻ᵀ P L⁻¹
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := 0.5 * (p[i*n+j] + p[j*n+i])
			p[i*n+j], p[j*n+i] = v, v
		}
	}
	return p
}

// transposeSquare transposes the n×n row-major a in place.
func transposeSquare(a []float64, n int) {
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			a[i*n+j], a[j*n+i] = a[j*n+i], a[i*n+j]
		}
	}
}
