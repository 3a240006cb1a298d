package linalg

import (
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// BlockedMin is the order from which Cholesky uses the blocked parallel
// kernel instead of gonum's Potrf. Below it factors stay gonum's bit for
// bit, so the small GPs of existing studies reproduce; from it on the
// blocked kernel, with the AVX2/FMA micro-kernel in its trailing updates,
// is 2.5–2.7× faster than Potrf on 2 cores (and faster from n = 256 on,
// which the threshold deliberately leaves unused).
const BlockedMin = 1024

// blockSize is the tile order of the blocked kernel.
const blockSize = 128

// factor overwrites the lower triangle of the n×n row-major l with its
// Cholesky factor and reports whether every pivot was positive; the strict
// upper triangle may be overwritten.
func factor(l []float64, n int) bool {
	if n < BlockedMin {
		_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: l})
		return ok
	}
	return CholeskyBlocked(l, n, workers())
}

// workers is the number of goroutines the blocked kernels use.
func workers() int { return runtime.GOMAXPROCS(0) }

// CholeskyBlocked overwrites the lower triangle of the n×n row-major a
// with its Cholesky factor L (a = L Lᵀ) by the right-looking tiled
// algorithm, and reports whether every pivot was positive. The strict
// upper triangles of the diagonal tiles are overwritten; other entries
// above the diagonal are not touched. With tiles of order b, step k
//
//	factors the diagonal tile,         L_kk L_kkᵀ = A_kk        (Potrf),
//	solves the tiles below it,         L_ik = A_ik L_kk⁻ᵀ       (Trsm),
//	updates the trailing tile rows,    A_ij −= L_ik L_jkᵀ, k < j ≤ i (trailing),
//
// the last two spread over up to workers goroutines, one tile row per
// task. A task's arithmetic does not depend on which goroutine runs it or
// on how many there are, and the updates of a tile are applied in the
// order of k, so the result is bit-for-bit the same for every workers ≥ 1
// and every GOMAXPROCS (the micro-kernel runs on the task's goroutine;
// gonum's Gemm, the fallback, splits its work by size alone). The two
// trailing-update paths round differently, so a factor is reproducible
// on one kind of CPU, not across CPUs with and without AVX2/FMA.
func CholeskyBlocked(a []float64, n, workers int) bool {
	b := blockSize
	for k := 0; k < n; k += b {
		kb := min(b, n-k)
		diag := blas64.Symmetric{Uplo: blas.Lower, N: kb, Stride: n, Data: a[k*n+k:]}
		if _, ok := lapack64.Potrf(diag); !ok {
			return false
		}
		rest := k + kb
		if rest == n {
			return true
		}
		lkk := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: kb, Stride: n, Data: a[k*n+k:]}
		rows := (n - rest + b - 1) / b
		parallel(rows, workers, func(t int) {
			i := rest + t*b
			ib := min(b, n-i)
			blas64.Trsm(blas.Right, blas.Trans, 1, lkk, view(a, n, i, k, ib, kb))
		})
		// Longest rows first so the last task to start is a short one.
		parallel(rows, workers, func(t int) {
			i := rest + (rows-1-t)*b
			ib := min(b, n-i)
			// A[i:i+ib, rest:i+ib] −= L[i:i+ib, k:k+kb] · L[rest:i+ib, k:k+kb]ᵀ;
			// the part above the diagonal of tile (i, i) is scratch.
			trailing(a, n, i, ib, k, kb, rest)
		})
	}
	return true
}

// trailing applies A[i:i+ib, rest:i+ib] −= L[i:i+ib, k:k+kb] ·
// L[rest:i+ib, k:k+kb]ᵀ by the micro-kernel when the CPU has one
// (gemmSubNT) and by gonum's Gemm otherwise.
func trailing(a []float64, n, i, ib, k, kb, rest int) {
	w := i + ib - rest
	if useKernel {
		gemmSubNT(ib, w, kb, a[i*n+k:], n, a[rest*n+k:], n, a[i*n+rest:], n)
		return
	}
	blas64.Gemm(blas.NoTrans, blas.Trans, -1,
		view(a, n, i, k, ib, kb), view(a, n, rest, k, w, kb),
		1, view(a, n, i, rest, ib, w))
}

// view returns the r×c block of the n×n row-major a at row i, column j.
func view(a []float64, n, i, j, r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: n, Data: a[i*n+j : (i+r-1)*n+j+c]}
}

// parallel runs task(0), …, task(m−1) on up to workers goroutines (the
// calling one included) and returns when all are done. Tasks are handed
// out in order; each runs exactly once.
func parallel(m, workers int, task func(int)) {
	workers = min(workers, m)
	if workers <= 1 {
		for t := 0; t < m; t++ {
			task(t)
		}
		return
	}
	var next atomic.Int64
	run := func() {
		for t := int(next.Add(1) - 1); t < m; t = int(next.Add(1) - 1) {
			task(t)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(run)
	}
	run()
	wg.Wait()
}
