package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// randRows returns an m×n matrix of standard normal entries.
func randRows(m, n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	b := make([]float64, m*n)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	return b
}

// The blocked right solves agree with gonum's Trsm to 1e-10 relative (the
// factor of a kernel matrix with noise 1e-3 has condition number ~1e4 in
// each triangular half), for orders and row counts that are and are not
// multiples of the tile and of the task size.
func TestSolveRightMatchesTrsm(t *testing.T) {
	for _, n := range []int{1, 9, blockSize, blockSize + 1, 3*blockSize - 5} {
		for _, m := range []int{1, rsolveRows, 2*rsolveRows + 3} {
			l := potrf(t, kernelMatrix(n, 6, 1e-3, uint64(n)), n)
			b := randRows(m, n, uint64(m))
			for _, trans := range []blas.Transpose{blas.Trans, blas.NoTrans} {
				want := append([]float64(nil), b...)
				blas64.Trsm(blas.Right, trans, 1, Tri(l, n), blas64.General{Rows: m, Cols: n, Stride: n, Data: want})
				got := append([]float64(nil), b...)
				if trans == blas.Trans {
					SolveRightLowerT(l, n, got, m)
				} else {
					SolveRightUpperT(TransposeLower(l, n), n, got, m)
				}
				if d := maxRelDiff(got, want); d > 1e-10 {
					t.Errorf("n=%d m=%d %v: blocked solve differs from Trsm by %.3g relative", n, m, trans, d)
				}
			}
		}
	}
}

// The right solves are bit-for-bit the same for every GOMAXPROCS.
func TestSolveRightBitwiseAcrossProcs(t *testing.T) {
	n, m := 3*blockSize+17, 3*rsolveRows+5
	if !testing.Short() {
		n = BlockedMin + 2*blockSize + 11
	}
	l := potrf(t, kernelMatrix(n, 6, 1e-4, 7), n)
	u := TransposeLower(l, n)
	b := randRows(m, n, 5)
	for _, name := range []string{"LT", "L"} {
		t.Run(name, func(t *testing.T) {
			sameBitsAcross(t, []int{1, 2, 3, 8}, []int{1}, func(int) []float64 {
				x := append([]float64(nil), b...)
				if name == "LT" {
					SolveRightLowerT(l, n, x, m)
				} else {
					SolveRightUpperT(u, n, x, m)
				}
				return x
			})
		})
	}
}

// BenchmarkSolveRight compares the blocked right solve with gonum's Trsm
// for |B| = 20 rows (a TES batch) against factors of order 1000–4000.
func BenchmarkSolveRight(b *testing.B) {
	const m = 20
	for _, n := range []int{1000, 2000, 4000} {
		l := make([]float64, n*n)
		if _, err := Cholesky(l, kernelMatrix(n, 6, 1e-3, 1), n); err != nil {
			b.Fatal(err)
		}
		rhs := randRows(m, n, 2)
		x := make([]float64, m*n)
		b.Run(fmt.Sprintf("ours/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(x, rhs)
				SolveRightLowerT(l, n, x, m)
			}
		})
		b.Run(fmt.Sprintf("gonum/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(x, rhs)
				blas64.Trsm(blas.Right, blas.Trans, 1, Tri(l, n), blas64.General{Rows: m, Cols: n, Stride: n, Data: x})
			}
		})
	}
}
