package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Inverse overwrites the lower triangle of the n×n row-major l, which
// holds a Cholesky factor L of A (A = L Lᵀ, lower triangle), with the
// lower triangle of A⁻¹ = L⁻ᵀ L⁻¹, as LAPACK's Potri does; the strict
// upper triangle is not referenced except inside the diagonal tiles. It
// reports false if a diagonal entry of L is zero. Below BlockedMin it is
// gonum's Potri; from there on the tiled kernels InvertLowerBlocked and
// lauumBlocked, whose results are bit-for-bit the same for every
// GOMAXPROCS.
func Inverse(l []float64, n int) bool {
	if n < BlockedMin {
		_, ok := lapack64.Potri(Tri(l, n))
		return ok
	}
	if !InvertLowerBlocked(l, n, workers()) {
		return false
	}
	lauumBlocked(l, n, workers())
	return true
}

// InvertLowerBlocked overwrites the lower triangle of the n×n row-major l
// with X = L⁻¹ by tiles, column tiles from the last (LAPACK's Dtrtri
// order): with the tiles right of and below column tile j already
// inverted (X₂₂),
//
//	X₂₁ = −X₂₂ L₂₁ L_jj⁻¹,  X_jj = L_jj⁻¹,
//
// the rows of X₂₁ computed by tile rows in parallel from a copy of the
// panel L₂₁ (up to workers goroutines). A tile row's arithmetic does not
// depend on the goroutine or their number. It reports false if a
// diagonal entry is zero.
func InvertLowerBlocked(l []float64, n, workers int) bool {
	b := blockSize
	panel := make([]float64, n*b)
	last := (n - 1) / b * b
	for j := last; j >= 0; j -= b {
		jb := min(b, n-j)
		rest := j + jb
		if m := n - rest; m > 0 {
			// panel ← L₂₁ ((n−rest)×jb, stride jb).
			for r := 0; r < m; r++ {
				copy(panel[r*jb:(r+1)*jb], l[(rest+r)*n+j:(rest+r)*n+j+jb])
			}
			ljj := diagTile(l, n, j, jb)
			rows := (m + b - 1) / b
			parallel(rows, workers, func(t int) {
				i := rest + t*b
				ib := min(b, n-i)
				out := view(l, n, i, j, ib, jb)
				// out ← X_ii P_i + X[i, rest:i] P[rest:i], then −out L_jj⁻¹.
				pi := blas64.General{Rows: ib, Cols: jb, Stride: jb, Data: panel[(i-rest)*jb : (i-rest+ib)*jb]}
				for r := 0; r < ib; r++ {
					copy(out.Data[r*n:r*n+jb], pi.Data[r*jb:(r+1)*jb])
				}
				blas64.Trmm(blas.Left, blas.NoTrans, 1, diagTile(l, n, i, ib), out)
				if i > rest {
					blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, view(l, n, i, rest, ib, i-rest),
						blas64.General{Rows: i - rest, Cols: jb, Stride: jb, Data: panel[:(i-rest)*jb]}, 1, out)
				}
				blas64.Trsm(blas.Right, blas.NoTrans, -1, ljj, out)
			})
		}
		if !lapack64.Trtri(diagTile(l, n, j, jb)) {
			return false
		}
	}
	return true
}

// lauumBlocked overwrites the lower triangle of the n×n row-major x,
// holding a lower-triangular X, with the lower triangle of XᵀX by tiles:
//
//	W_ij = X_iiᵀ X_ij + Σ_{k>i} X_kiᵀ X_kj   (j < i),
//	W_ii = X_iiᵀ X_ii + Σ_{k>i} X_kiᵀ X_ki,
//
// tile rows in ascending order (a row's tiles read only rows ≥ i), the
// off-diagonal tiles of a row in parallel and its diagonal tile last.
func lauumBlocked(x []float64, n, workers int) {
	b := blockSize
	for i := 0; i < n; i += b {
		ib := min(b, n-i)
		below := n - i - ib
		xii := diagTile(x, n, i, ib)
		parallel(i/b, workers, func(t int) {
			j := t * b
			out := view(x, n, i, j, ib, b)
			blas64.Trmm(blas.Left, blas.Trans, 1, xii, out)
			if below > 0 {
				blas64.Gemm(blas.Trans, blas.NoTrans, 1, view(x, n, i+ib, i, below, ib), view(x, n, i+ib, j, below, b), 1, out)
			}
		})
		lapackgonum.Implementation{}.Dlauum(blas.Lower, ib, xii.Data, n)
		if below > 0 {
			blas64.Syrk(blas.Trans, 1, view(x, n, i+ib, i, below, ib), 1, blas64.Symmetric{Uplo: blas.Lower, N: ib, Stride: n, Data: xii.Data})
		}
	}
}
