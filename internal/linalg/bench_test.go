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

// BenchmarkTrailingUpdate times one tile row of the trailing update
// (C −= A Bᵀ with A 128×128, B 1024×128) by the micro-kernel and by
// gonum's Gemm, single goroutine.
func BenchmarkTrailingUpdate(b *testing.B) {
	const m, n, k = blockSize, 1024, blockSize
	a := kernelMatrix(n+m, 6, 1e-3, 1)
	ld := n + m
	c := make([]float64, m*n)
	flops := float64(2 * m * n * k)
	if hasKernel {
		b.Run("kernel", func(b *testing.B) {
			for b.Loop() {
				gemmSubNT(m, n, k, a[n*ld:], ld, a, ld, c, n)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	b.Run("gonum", func(b *testing.B) {
		for b.Loop() {
			blas64.Gemm(blas.NoTrans, blas.Trans, -1,
				view(a, ld, n, 0, m, k), view(a, ld, 0, 0, n, k),
				1, blas64.General{Rows: m, Cols: n, Stride: n, Data: c})
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}
