package linalg

import (
	"errors"
	"fmt"
	"math"
)

// ErrNotPositiveDefinite is returned (wrapped) by Cholesky when a matrix
// stays indefinite after the largest jitter, MaxJitter × mean diagonal, or
// when its diagonal holds a NaN or ±Inf.
var ErrNotPositiveDefinite = errors.New("matrix is not positive definite even with maximal jitter")

// The jitter policy, used for every Cholesky factorization in the project
// (kernel matrices of a GP and the small batch covariances of the
// acquisitions alike). Let m be the mean of A's diagonal (1 if that mean
// is not positive). Cholesky first factors A itself, then A + c·m·I for
// c = MinJitter, 10·MinJitter, …, MaxJitter, and returns the first
// factorization that succeeds. A factorization fails when a pivot is not
// positive or not finite, or when its smallest squared pivot L_ii² is below
// MinPivot·m: an exactly singular matrix (duplicate noise-free inputs, two
// identical batch points) can pass with a pivot of round-off size, which
// would amplify errors by ~1e16; escalating instead bounds the condition
// number by about 1/MinJitter. The jitter acts like extra observation
// noise of size c·m; MaxJitter = 1e-4 of the signal variance is well below
// the resolution of any standardized objective.
const (
	MinJitter = 1e-10
	MaxJitter = 1e-4
	MinPivot  = 1e-2 * MinJitter
)

// Jitter records what Cholesky added to the diagonal.
type Jitter struct {
	// Abs is the amount added to every diagonal entry (0 if none).
	Abs float64
	// Rel is Abs divided by the mean diagonal, the level c of the
	// escalation, when the jitter scales with the matrix (mean diagonal
	// > 0); 0 when no jitter was added or the mean diagonal was not
	// positive. A likelihood gradient needs it: the jitter then moves
	// with the hyper-parameters through the diagonal.
	Rel float64
}

// Cholesky writes into dst[:n*n] the lower Cholesky factor L of A + jI,
// L Lᵀ = A + jI, with the jitter j chosen by the policy above (see
// MinJitter). A is the symmetric n×n row-major a; only its lower triangle
// is read and a is not modified (a and dst must not overlap). The strict
// upper triangle of dst is zeroed. Matrices of order BlockedMin or more
// are factored by the blocked parallel kernel (CholeskyBlocked). The error
// wraps ErrNotPositiveDefinite.
func Cholesky(dst, a []float64, n int) (Jitter, error) {
	if n == 0 {
		return Jitter{}, nil
	}
	if len(a) < n*n || len(dst) < n*n {
		return Jitter{}, fmt.Errorf("cholesky of %d×%d matrix: buffers of length %d and %d are shorter than %d", n, n, len(a), len(dst), n*n)
	}
	mean, err := meanDiag(a, n)
	if err != nil {
		return Jitter{}, err
	}
	scaled := mean > 0
	if !scaled {
		mean = 1
	}
	dst = dst[:n*n]
	jit := 0.0
	for {
		copyLower(dst, a, n, jit)
		if factor(dst, n) && minPivot(dst, n) >= MinPivot*mean {
			zeroUpper(dst, n)
			j := Jitter{Abs: jit}
			if scaled && jit > 0 {
				j.Rel = jit / mean
			}
			return j, nil
		}
		switch {
		case jit == 0:
			jit = MinJitter * mean
		case jit < MaxJitter*mean*(1-1e-9):
			jit *= 10
		default:
			return Jitter{}, fmt.Errorf("cholesky of %d×%d matrix (jitter up to %.3g, mean diagonal %.3g): %w", n, n, jit, mean, ErrNotPositiveDefinite)
		}
	}
}

// meanDiag returns the mean of a's diagonal, or an error naming the first
// diagonal entry that is NaN or infinite.
func meanDiag(a []float64, n int) (float64, error) {
	var s float64
	for i := 0; i < n; i++ {
		d := a[i*n+i]
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return 0, fmt.Errorf("cholesky of %d×%d matrix: diagonal entry %d is %v: %w", n, n, i, d, ErrNotPositiveDefinite)
		}
		s += d
	}
	return s / float64(n), nil
}

// copyLower copies a's lower triangle into dst and adds jit to the
// diagonal; dst's strict upper triangle is left as it was.
func copyLower(dst, a []float64, n int, jit float64) {
	for i := 0; i < n; i++ {
		copy(dst[i*n:i*n+i+1], a[i*n:i*n+i+1])
		dst[i*n+i] += jit
	}
}

func zeroUpper(l []float64, n int) {
	for i := 0; i < n; i++ {
		clear(l[i*n+i+1 : (i+1)*n])
	}
}

// minPivot returns min L_ii² (NaN if any pivot is NaN or infinite: a NaN
// or Inf anywhere in row i of L reaches L_ii, so the diagonal suffices).
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

// LogDet returns log det(L Lᵀ) = 2 Σ log L_ii for the n×n factor l.
func LogDet(l []float64, n int) float64 {
	var s float64
	for i := 0; i < n; i++ {
		s += math.Log(l[i*n+i])
	}
	return 2 * s
}
