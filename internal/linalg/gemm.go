package linalg

import "sync"

// Register block of the micro-kernel: kernel6x8 updates mr rows and nr
// columns of C.
const (
	mr = 6
	nr = 8
)

// useKernel selects the packed micro-kernel path of gemmSubNT; false (no
// AVX2/FMA, non-amd64, the purego tag, or a test) means gonum's Gemm.
var useKernel = hasKernel

// gemmSubNT computes C −= A Bᵀ for the row-major m×k A (stride lda), n×k
// B (stride ldb) and m×n C (stride ldc) with the micro-kernel:
//
//	C_ij −= Σ_{p<k} A_ip B_jp,
//
// each sum accumulated in p order by fused multiply-adds. A is packed
// into slivers of mr rows and B into slivers of nr rows (zero padded at
// the edges); for every B sliver the kernel sweeps all A slivers, so the
// B sliver stays in L1 and packed A in L2. Edge blocks go through a
// scratch block, so the arithmetic of an entry does not depend on where
// it lies. Callers check useKernel.
func gemmSubNT(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	buf := getBuf(packedLen(m, mr, k) + nr*k)
	defer putBuf(buf)
	pa := (*buf)[:packedLen(m, mr, k)]
	pb := (*buf)[len(pa) : len(pa)+nr*k]
	pack(pa, a, lda, m, k, mr)
	var edge [mr * nr]float64
	for j := 0; j < n; j += nr {
		nj := min(nr, n-j)
		pack(pb, b[j*ldb:], ldb, nj, k, nr)
		for i := 0; i < m; i += mr {
			mi := min(mr, m-i)
			ap := &pa[(i/mr)*mr*k]
			if mi == mr && nj == nr {
				kernel6x8(k, ap, &pb[0], &c[i*ldc+j], ldc)
				continue
			}
			edge = [mr * nr]float64{}
			kernel6x8(k, ap, &pb[0], &edge[0], nr)
			for r := 0; r < mi; r++ {
				row := c[(i+r)*ldc+j : (i+r)*ldc+j+nj]
				for t := range row {
					row[t] += edge[r*nr+t]
				}
			}
		}
	}
}

// packedLen is the length of rows×k packed in slivers of s rows.
func packedLen(rows, s, k int) int { return (rows + s - 1) / s * s * k }

// pack writes the rows×k row-major x (stride ld) into dst as slivers of s
// rows, each stored column by column (dst[q·s·k + p·s + r] = x[(q·s+r)·ld + p]),
// the rows past the last padded with zeros.
func pack(dst, x []float64, ld, rows, k, s int) {
	for q := 0; q*s < rows; q++ {
		sl := dst[q*s*k : (q+1)*s*k]
		for r := 0; r < s; r++ {
			i := q*s + r
			if i >= rows {
				for p := 0; p < k; p++ {
					sl[p*s+r] = 0
				}
				continue
			}
			src := x[i*ld : i*ld+k]
			for p, v := range src {
				sl[p*s+r] = v
			}
		}
	}
}

// bufPool recycles packing buffers across the trailing-update tasks.
var bufPool sync.Pool

func getBuf(n int) *[]float64 {
	if p, ok := bufPool.Get().(*[]float64); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float64, n)
	return &s
}

func putBuf(p *[]float64) { bufPool.Put(p) }
