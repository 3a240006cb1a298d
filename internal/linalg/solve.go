package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Triangular solves with a Cholesky factor L (n×n, row-major, lower).

// Tri returns L as a gonum triangular matrix for blas64 calls.
func Tri(l []float64, n int) blas64.Triangular {
	return blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: n, Data: l}
}

// SolveVec solves L Lᵀ x = b in place (b overwritten by x).
func SolveVec(l []float64, n int, b []float64) {
	SolveLowerVec(l, n, b)
	SolveLowerTVec(l, n, b)
}

// SolveLowerVec solves L x = b in place by forward substitution (row-wise
// dot products; gonum's Dtrsv has no assembly kernel and was 5× slower).
func SolveLowerVec(l []float64, n int, b []float64) {
	b = b[:n]
	for i := 0; i < n; i++ {
		row := l[i*n : i*n+i+1]
		b[i] = (b[i] - Dot(row[:i], b[:i])) / row[i]
	}
}

// SolveLowerTVec solves Lᵀ x = b in place by back substitution, reading L
// by rows (axpy form).
func SolveLowerTVec(l []float64, n int, b []float64) {
	b = b[:n]
	for i := n - 1; i >= 0; i-- {
		row := l[i*n : i*n+i+1]
		xi := b[i] / row[i]
		b[i] = xi
		axpy(-xi, row[:i], b[:i])
	}
}

// SolveLowerCols overwrites the n×m row-major B (one right-hand side per
// column) with L⁻¹ B by forward substitution, one matrix-vector product
// per row of L:
//
//	B_j ← (B_j − Σ_{t<j} L_jt B_t) / L_jj   (B_j is row j, m wide).
//
// Row j's update is gonum's Dgemv (Trans), whose SSE2 kernel works on 4
// factor entries × 4 columns at a time, about three times the throughput
// of per-column dot products. Every column sees the same operations,
// b_j + (−L_j0) v_0 + (−L_j1) v_1 + … in order of t, then the division,
// so a column's result does not depend on its position or on m; it
// differs from Trsm's (b_j − Σ_t L_jt v_t)/L_jj only by rounding.
func SolveLowerCols(l []float64, n int, b []float64, m int) {
	for j := 0; j < n; j++ {
		row := b[j*m : (j+1)*m]
		if j > 0 {
			blas64.Gemv(blas.Trans, -1,
				blas64.General{Rows: j, Cols: m, Stride: m, Data: b[:j*m]},
				blas64.Vector{N: j, Inc: 1, Data: l[j*n : j*n+j]},
				1, blas64.Vector{N: m, Inc: 1, Data: row})
		}
		d := l[j*n+j]
		for i := range row {
			row[i] /= d
		}
	}
}

// SolveLower overwrites the n×m row-major b with L⁻¹ b.
func SolveLower(l []float64, n int, b []float64, m int) {
	blas64.Trsm(blas.Left, blas.NoTrans, 1, Tri(l, n), blas64.General{Rows: n, Cols: m, Stride: m, Data: b})
}

// SolveLowerT overwrites the n×m row-major b with L⁻ᵀ b.
func SolveLowerT(l []float64, n int, b []float64, m int) {
	blas64.Trsm(blas.Left, blas.Trans, 1, Tri(l, n), blas64.General{Rows: n, Cols: m, Stride: m, Data: b})
}

// Dot returns aᵀb (four partial sums: shorter dependency chains).
func Dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy computes y += a·x.
func axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}
