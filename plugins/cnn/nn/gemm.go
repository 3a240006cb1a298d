package nn

import (
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// float is the element type of the network: float32 for training speed,
// float64 for gradient checks.
type float interface {
	float32 | float64
}

// Tile bounds for the GEMM driver. gonum's native GEMM goes parallel (and
// switches from its serial kernels to 64×64 blocks) once C has at least four
// 64×64 blocks, so tiles stay within three blocks. For the dot-product form
// (op(B) = Bᵀ) 32×64 measured best (within noise) among 16–128 × 32–128; for
// the axpy forms (op(B) = B) the tile width is the axpy length, and 32×192
// ran about twice as fast as 32×64 on the network's backward shapes.
const (
	tileRows = 32
	tileCols = 64
	axpyRows = 32
	axpyCols = 192
)

// kBlock is the length of the slices of the inner (k) dimension that one
// tile multiplies at a time, so that a 64×kBlock block of A and of B stay in
// the L2 cache while all the tile's dot products reuse them. The slices are
// accumulated in increasing k order, so results stay deterministic.
const kBlock = 256

// gemm computes C = op(A)·op(B) + beta·C for row-major A, B, C, with
// op(A) m×k and op(B) k×n, like BLAS xGEMM with alpha = 1. It splits C into
// tiles, each computed by one goroutine as a sequence of serial BLAS calls
// over k-slices, and shares the tiles among GOMAXPROCS goroutines. Every
// element of C is reduced by one goroutine in a fixed order, so the result
// does not depend on scheduling.
func gemm[T float](tA, tB blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	tm, tn := tileSizes(m, n, tileRows, tileCols)
	if tB == blas.NoTrans {
		tm, tn = tileSizes(m, n, axpyRows, axpyCols)
	}
	rowTiles, colTiles := (m+tm-1)/tm, (n+tn-1)/tn
	tiles := rowTiles * colTiles
	one := func(t int) {
		i, j := (t/colTiles)*tm, (t%colTiles)*tn
		mi, nj := min(tm, m-i), min(tn, n-j)
		cs, bt := c[i*ldc+j:], beta
		for l := 0; l < k; l += kBlock {
			kl := min(kBlock, k-l)
			var as, bs []T
			if tA == blas.Trans {
				as = a[l*lda+i:]
			} else {
				as = a[i*lda+l:]
			}
			if tB == blas.Trans {
				bs = b[j*ldb+l:]
			} else {
				bs = b[l*ldb+j:]
			}
			gemmSerial(tA, tB, mi, nj, kl, as, lda, bs, ldb, bt, cs, ldc)
			bt = 1
		}
	}
	workers := min(runtime.GOMAXPROCS(0), tiles)
	if workers <= 1 {
		for t := range tiles {
			one(t)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for t := int(next.Add(1) - 1); t < tiles; t = int(next.Add(1) - 1) {
				one(t)
			}
		})
	}
	wg.Wait()
}

// tileSizes picks a tile no larger than tileRows×tileCols that still leaves
// several tiles per worker, so two cores stay busy on small products.
func tileSizes(m, n, rows, cols int) (tm, tn int) {
	tm, tn = min(m, rows), min(n, cols)
	want := 4 * runtime.GOMAXPROCS(0)
	for ((m+tm-1)/tm)*((n+tn-1)/tn) < want && (tm > 16 || tn > 16) {
		if tn >= tm {
			tn = (tn + 1) / 2
		} else {
			tm = (tm + 1) / 2
		}
	}
	return tm, tn
}

// gemmSerial is one BLAS call on a tile; the type switch picks Sgemm or Dgemm.
func gemmSerial[T float](tA, tB blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch a := any(a).(type) {
	case []float32:
		blas32.Implementation().Sgemm(tA, tB, m, n, k, 1, a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		blas64.Implementation().Dgemm(tA, tB, m, n, k, 1, a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// transpose writes the transpose of the r×c row-major matrix src into dst
// (c×r). It works in cache-sized blocks, split by rows of dst across
// goroutines.
func transpose[T float](dst, src []T, r, c int) {
	const blk = 32
	parallelFor(c, blk, func(lo, hi int) {
		for j0 := lo; j0 < hi; j0 += blk {
			j1 := min(j0+blk, hi)
			for i0 := 0; i0 < r; i0 += blk {
				i1 := min(i0+blk, r)
				for j := j0; j < j1; j++ {
					d := dst[j*r : j*r+r]
					for i := i0; i < i1; i++ {
						d[i] = src[i*c+j]
					}
				}
			}
		}
	})
}

// parallelFor runs f on contiguous ranges [lo, hi) covering [0, n), split
// among GOMAXPROCS goroutines with at least grain items each. Ranges never
// overlap, so f may write to disjoint outputs without synchronisation.
func parallelFor(n, grain int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+grain-1)/max(grain, 1))
	if workers <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}
