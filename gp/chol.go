package gp

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// ErrNotPositiveDefinite is returned (wrapped) when a covariance matrix stays
// indefinite after the largest jitter (MaxJitter × mean diagonal) was added.
// Typical causes: NaN/Inf hyper-parameters, a noise-free model with many
// duplicate inputs, or absurd length-scales. Fit a noise variance > 0 or
// remove duplicates.
var ErrNotPositiveDefinite = errors.New("covariance matrix is not positive definite even with maximal jitter")

// Jitter escalation for Cholesky factorizations: first try without jitter,
// then add j·mean(diag) to the diagonal for j = MinJitter, 10·MinJitter, ...,
// MaxJitter. The jitter used is recorded (GP.Jitter) and acts like extra
// observation noise of that size; 1e-4 of the signal variance is well below
// the resolution of any standardized objective.
const (
	MinJitter = 1e-10
	MaxJitter = 1e-4
)

// cholFactor is a lower-triangular Cholesky factor stored row-major.
type cholFactor struct {
	n      int
	l      []float64 // n×n row-major, lower triangle valid, upper zero
	jitter float64   // absolute amount added to the diagonal
	// jitterRel is jitter / mean diagonal of the factored matrix when the
	// jitter was scaled by that mean (the escalation below), 0 when no
	// jitter was added or it does not scale. The likelihood gradient needs
	// it: the jitter moves with the hyper-parameters through the diagonal.
	jitterRel float64
}

func (c *cholFactor) tri() blas64.Triangular {
	return blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: c.n, Stride: c.n, Data: c.l}
}

// logDet returns log|A| = 2 Σ log L_ii.
func (c *cholFactor) logDet() float64 {
	var s float64
	for i := 0; i < c.n; i++ {
		s += math.Log(c.l[i*c.n+i])
	}
	return 2 * s
}

// solveVec solves A x = b in place (b overwritten by x).
func (c *cholFactor) solveVec(b []float64) {
	c.halfSolveVec(b)
	c.halfSolveTVec(b)
}

// halfSolveVec solves L x = b in place by forward substitution (row-wise
// dot products; gonum's Dtrsv has no assembly kernel and was 5× slower).
func (c *cholFactor) halfSolveVec(b []float64) {
	n, l := c.n, c.l
	b = b[:n]
	for i := 0; i < n; i++ {
		row := l[i*n : i*n+i+1]
		b[i] = (b[i] - dot(row[:i], b[:i])) / row[i]
	}
}

// halfSolveTVec solves Lᵀ x = b in place by back substitution, reading L
// by rows (axpy form).
func (c *cholFactor) halfSolveTVec(b []float64) {
	n, l := c.n, c.l
	b = b[:n]
	for i := n - 1; i >= 0; i-- {
		row := l[i*n : i*n+i+1]
		xi := b[i] / row[i]
		b[i] = xi
		axpy(-xi, row[:i], b[:i])
	}
}

// axpy computes y += a·x.
func axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// choleskyJitter factors the symmetric n×n matrix a (row-major, lower
// triangle read) with jitter escalation. a is not modified.
func choleskyJitter(a []float64, n int) (*cholFactor, error) {
	return choleskyJitterBuf(a, n, nil)
}

// choleskyJitterBuf is choleskyJitter writing the factor into buf (len ≥
// n², reused by the fit loop); buf == nil allocates.
func choleskyJitterBuf(a []float64, n int, buf []float64) (*cholFactor, error) {
	if n == 0 {
		return &cholFactor{}, nil
	}
	var meanDiag float64
	for i := 0; i < n; i++ {
		d := a[i*n+i]
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return nil, fmt.Errorf("cholesky: diagonal entry %d is %v: %w", i, d, ErrNotPositiveDefinite)
		}
		meanDiag += d
	}
	meanDiag /= float64(n)
	scaled := meanDiag > 0
	if !scaled {
		meanDiag = 1
	}
	if buf == nil {
		buf = make([]float64, n*n)
	}
	buf = buf[:n*n]
	clear(buf)
	jit := 0.0
	for {
		for i := 0; i < n; i++ {
			copy(buf[i*n:i*n+i+1], a[i*n:i*n+i+1])
			buf[i*n+i] += jit
		}
		if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: buf}); ok && minPivot(buf, n) >= minPivotRel*meanDiag {
			for i := 0; i < n; i++ {
				clear(buf[i*n+i+1 : (i+1)*n])
			}
			c := &cholFactor{n: n, l: buf, jitter: jit}
			if scaled && jit > 0 {
				c.jitterRel = jit / meanDiag
			}
			return c, nil
		}
		switch {
		case jit == 0:
			jit = MinJitter * meanDiag
		case jit < MaxJitter*meanDiag*(1-1e-9):
			jit *= 10
		default:
			return nil, fmt.Errorf("cholesky of %d×%d matrix (jitter up to %.3g): %w", n, n, jit, ErrNotPositiveDefinite)
		}
	}
}

// minPivotRel: a factorization whose smallest squared pivot L_ii² is below
// minPivotRel × mean diagonal is treated as failed. Exactly singular
// matrices (duplicate noise-free points) can pass Potrf with a pivot of
// round-off size, which would amplify errors by ~1e16; escalating to
// MinJitter instead bounds the amplification.
const minPivotRel = 1e-2 * MinJitter

// minPivot returns min L_ii² (NaN if any pivot is NaN: a NaN or Inf
// anywhere in row i of L reaches L_ii, so checking the diagonal suffices).
func minPivot(l []float64, n int) float64 {
	m := math.Inf(1)
	for i := 0; i < n; i++ {
		p := l[i*n+i] * l[i*n+i]
		if math.IsNaN(p) || math.IsInf(p, 0) {
			return math.NaN()
		}
		m = math.Min(m, p)
	}
	return m
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// halfSolveCols overwrites the n×m row-major matrix B (n = c.n; one
// right-hand side per column) with L⁻¹ B by forward substitution, one
// matrix-vector product per row of L:
//
//	B_j ← (B_j − Σ_{t<j} L_jt B_t) / L_jj   (B_j is row j, m wide).
//
// This is Predict's triangular solve for a block of m queries laid out one
// query per column. Row j's update is gonum's Dgemv (Trans), whose SSE2
// kernel works on 4 factor entries × 4 queries at a time, about three times
// the throughput of the per-query dot products of Trsm(Right, Trans) on the
// row layout. Every column sees the same operations, b_j + (−L_j0) v_0 +
// (−L_j1) v_1 + … in order of t, then the division, so a query's result
// does not depend on its position in the batch; it differs from Trsm's
// (b_j − Σ_t L_jt v_t)/L_jj only by rounding.
func (c *cholFactor) halfSolveCols(b []float64, m int) {
	n, l := c.n, c.l
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
