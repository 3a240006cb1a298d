package tes

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/internal/linalg"
)

// Small dense kernels on row-major []float64 for the per-evaluation work of
// the acquisition (q, |X*| ≤ ~50): allocation-free, BLAS-backed (gonum's
// native blas64), and with the reverse-mode rules the gradients need.

// errIndefinite marks a matrix or variance that is not positive definite;
// it is the error the shared Cholesky factorization wraps.
var errIndefinite = linalg.ErrNotPositiveDefinite

func general(rows, cols int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data}
}

// gemm computes c = alpha·op(a)·op(b) + beta·c on row-major slices.
func gemm(ta, tb bool, alpha float64, a []float64, ar, ac int, b []float64, br, bc int, beta float64, c []float64) {
	tA, tB := blas.NoTrans, blas.NoTrans
	if ta {
		tA = blas.Trans
	}
	if tb {
		tB = blas.Trans
	}
	m := ar
	if ta {
		m = ac
	}
	n := bc
	if tb {
		n = br
	}
	blas64.Gemm(tA, tB, alpha, general(ar, ac, a), general(br, bc, b), beta, general(m, n, c))
}

// cholInverseTo writes (L Lᵀ)⁻¹ into dst (n×n, full, symmetric) and returns
// it.
func cholInverseTo(dst, l []float64, n int) []float64 {
	for i := range dst[:n*n] {
		dst[i] = 0
	}
	for i := 0; i < n; i++ {
		dst[i*n+i] = 1
	}
	linalg.SolveLower(l, n, dst, n)
	linalg.SolveLowerT(l, n, dst, n)
	symmetrize(dst, n)
	return dst
}

// symmetrize replaces a by (a + aᵀ)/2.
func symmetrize(a []float64, n int) {
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := 0.5 * (a[i*n+j] + a[j*n+i])
			a[i*n+j], a[j*n+i] = v, v
		}
	}
}

// symData copies a SymDense into a full row-major slice.
func symData(s mat.Symmetric) ([]float64, int) {
	n := s.SymmetricDim()
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := s.At(i, j)
			out[i*n+j], out[j*n+i] = v, v
		}
	}
	return out, n
}

// denseData copies a mat.Matrix into a row-major slice.
func denseData(m mat.Matrix) ([]float64, int, int) {
	r, c := m.Dims()
	out := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[i*c+j] = m.At(i, j)
		}
	}
	return out, r, c
}

// allFinite reports whether every element is finite.
func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
