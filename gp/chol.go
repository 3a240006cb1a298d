package gp

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/tesbo/tesbo/internal/linalg"
)

// errNotPositiveDefinite is returned (wrapped) when a covariance matrix stays
// indefinite after the largest jitter (maxJitter × mean diagonal) was added.
// Typical causes: NaN/Inf hyper-parameters, a noise-free model with many
// duplicate inputs, or absurd length-scales. Fit a noise variance > 0 or
// remove duplicates.
var errNotPositiveDefinite = linalg.ErrNotPositiveDefinite

// Jitter escalation for Cholesky factorizations: first try without jitter,
// then add j·mean(diag) to the diagonal for j = minJitter, 10·minJitter, ...,
// maxJitter. The jitter used is recorded (GP.Jitter) and acts like extra
// observation noise of that size; 1e-4 of the signal variance is well below
// the resolution of any standardized objective. The same policy holds for
// every Cholesky factorization in this module.
const (
	minJitter = linalg.MinJitter
	maxJitter = linalg.MaxJitter
)

// cholFactor is a lower-triangular Cholesky factor stored row-major.
type cholFactor struct {
	n      int
	l      []float64 // n×n row-major, lower triangle valid, upper zero
	jitter float64   // absolute amount added to the diagonal
	// jitterRel is jitter / mean diagonal of the factored matrix when the
	// jitter was scaled by that mean (the escalation), 0 when no jitter
	// was added or it does not scale. The likelihood gradient needs it:
	// the jitter moves with the hyper-parameters through the diagonal.
	jitterRel float64

	upperOnce sync.Once
	upper     []float64 // Lᵀ row-major, for rightSolve at large n
}

func (c *cholFactor) tri() blas64.Triangular { return linalg.Tri(c.l, c.n) }

// logDet returns log|A| = 2 Σ log L_ii.
func (c *cholFactor) logDet() float64 { return linalg.LogDet(c.l, c.n) }

// solveVec solves A x = b in place (b overwritten by x).
func (c *cholFactor) solveVec(b []float64) { linalg.SolveVec(c.l, c.n, b) }

// halfSolveVec solves L x = b in place.
func (c *cholFactor) halfSolveVec(b []float64) { linalg.SolveLowerVec(c.l, c.n, b) }

// halfSolveTVec solves Lᵀ x = b in place.
func (c *cholFactor) halfSolveTVec(b []float64) { linalg.SolveLowerTVec(c.l, c.n, b) }

// halfSolveCols overwrites the n×m row-major B (n = c.n; one right-hand
// side per column, e.g. Predict's block of m queries) with L⁻¹ B; a
// column's result does not depend on its position in the block.
func (c *cholFactor) halfSolveCols(b []float64, m int) { linalg.SolveLowerCols(c.l, c.n, b, m) }

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
	if buf == nil {
		buf = make([]float64, n*n)
	}
	buf = buf[:n*n]
	j, err := linalg.Cholesky(buf, a, n)
	if err != nil {
		return nil, err
	}
	return &cholFactor{n: n, l: buf, jitter: j.Abs, jitterRel: j.Rel}, nil
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// rightSolveMin is the order from which rightSolveT and rightSolve use the
// blocked solves (a variable so that tests can compare both paths).
var rightSolveMin = linalg.BlockedMin

// rightSolveT overwrites the m×n row-major b (n = c.n) with b L⁻ᵀ: each
// row r becomes L⁻¹ r. Below rightSolveMin it is gonum's Trsm (the
// results of small models are unchanged), from there on the blocked
// parallel solve, which reads L once for all rows.
func (c *cholFactor) rightSolveT(b []float64, m int) {
	if c.n < rightSolveMin {
		blas64.Trsm(blas.Right, blas.Trans, 1, c.tri(), blas64.General{Rows: m, Cols: c.n, Stride: c.n, Data: b})
		return
	}
	linalg.SolveRightLowerT(c.l, c.n, b, m)
}

// rightSolve overwrites the m×n row-major b with b L⁻¹ (rows become
// L⁻ᵀ r), dispatched as rightSolveT. The blocked solve reads a transposed
// copy of L, made on first use (n² more memory for a large model).
func (c *cholFactor) rightSolve(b []float64, m int) {
	if c.n < rightSolveMin {
		blas64.Trsm(blas.Right, blas.NoTrans, 1, c.tri(), blas64.General{Rows: m, Cols: c.n, Stride: c.n, Data: b})
		return
	}
	c.upperOnce.Do(func() { c.upper = linalg.TransposeLower(c.l, c.n) })
	linalg.SolveRightUpperT(c.upper, c.n, b, m)
}
