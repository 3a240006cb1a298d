package linalg

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// BenchmarkCholesky compares Cholesky (blocked parallel kernel from
// BlockedMin on) with gonum's Potrf on Matérn-5/2 kernel matrices (d = 6).
// scripts/cholesky_numpy.py times numpy's (OpenBLAS) on the same sizes.
//
//	go test -run '^$' -bench Cholesky -benchtime 5x ./internal/linalg
func BenchmarkCholesky(b *testing.B) {
	for _, n := range []int{256, 512, 1000, 2000, 4000} {
		a := kernelMatrix(n, 6, 1e-3, 1)
		l := make([]float64, n*n)
		b.Run(fmt.Sprintf("ours/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copyLower(l, a, n, 0)
				if !CholeskyBlocked(l, n, workers()) {
					b.Fatal("failed")
				}
			}
		})
		b.Run(fmt.Sprintf("gonum/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copyLower(l, a, n, 0)
				if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: l}); !ok {
					b.Fatal("failed")
				}
			}
		})
	}
}
