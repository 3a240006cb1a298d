package gp

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Add returns the posterior after also observing y at the rows of X (k×d),
// real or fantasized (constant liar, BUCB). g is unchanged. The Cholesky
// factor is extended by a block instead of refactorized (rank-k update,
// O(n² k + n k² + k³)):
//
//	L' = [ L  0 ],  B = K_XD L⁻ᵀ,  L_S L_Sᵀ = K_XX + (σ_n² + jitter) I − B Bᵀ,
//	     [ B  L_S]
//
// using the same diagonal jitter as g. If the Schur complement needs more
// jitter than g used (near-duplicates of existing points in a noise-free
// model), Add falls back to a full refactorization with jitter escalation,
// so the whole diagonal always carries the same jitter.
func (g *GP) Add(X *mat.Dense, y []float64) (*GP, error) {
	if X == nil {
		return nil, fmt.Errorf("gp.Add: nil inputs: %w", errBadInput)
	}
	k, d := X.Dims()
	if d != g.d {
		return nil, fmt.Errorf("gp.Add: X has %d columns, GP has dimension %d: %w", d, g.d, errBadInput)
	}
	if len(y) != k {
		return nil, fmt.Errorf("gp.Add: %d inputs but %d outputs: %w", k, len(y), errBadInput)
	}
	if err := checkFiniteDense(X, "X"); err != nil {
		return nil, fmt.Errorf("gp.Add: %w", err)
	}
	if err := checkFiniteVec(y, "y"); err != nil {
		return nil, fmt.Errorf("gp.Add: %w", err)
	}
	n := g.n
	nn := n + k
	xAll := mat.NewDense(nn, d, nil)
	xAll.Slice(0, n, 0, d).(*mat.Dense).Copy(g.x)
	xAll.Slice(n, nn, 0, d).(*mat.Dense).Copy(X)
	yAll := make([]float64, 0, nn)
	yAll = append(append(yAll, g.y...), y...)
	ng := newShell(g.k, g.noise, xAll, yAll)

	// B = K_XD L⁻ᵀ (k×n).
	b := g.crossD(X)
	g.chol.rightSolveT(b, k)
	// Schur complement K_XX + (σ²+jitter) I − B Bᵀ.
	sc := make([]float64, k*k)
	crossCovInto(g.k, sc, X, X)
	for i := 0; i < k; i++ {
		sc[i*k+i] += g.noise + g.chol.jitter
	}
	blas64.Syrk(blas.NoTrans, -1, blas64.General{Rows: k, Cols: n, Stride: n, Data: b}, 1,
		blas64.Symmetric{Uplo: blas.Lower, N: k, Stride: k, Data: sc})
	ls, err := choleskyJitter(sc, k)
	if err != nil || ls.jitter > 0 {
		// Fall back to a full refactorization with jitter escalation.
		K := ng.kernelMatrix()
		for i := 0; i < nn; i++ {
			K[i*nn+i] += g.noise
		}
		c, err := choleskyJitter(K, nn)
		if err != nil {
			return nil, fmt.Errorf("gp.Add: factorize K+σ²I (n=%d): %w", nn, err)
		}
		ng.setFactor(c)
		return ng, nil
	}
	l := make([]float64, nn*nn)
	for i := 0; i < n; i++ {
		copy(l[i*nn:i*nn+i+1], g.chol.l[i*n:i*n+i+1])
	}
	for i := 0; i < k; i++ {
		row := l[(n+i)*nn : (n+i+1)*nn]
		copy(row[:n], b[i*n:(i+1)*n])
		copy(row[n:n+i+1], ls.l[i*k:i*k+i+1])
	}
	ng.setFactor(&cholFactor{n: nn, l: l, jitter: g.chol.jitter, jitterRel: g.chol.jitterRel})
	return ng, nil
}
