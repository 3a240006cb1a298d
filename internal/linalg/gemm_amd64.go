//go:build amd64 && !purego

package linalg

import "golang.org/x/sys/cpu"

// hasKernel reports whether the CPU runs kernel6x8 (AVX2 and FMA).
var hasKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kernel6x8 subtracts from the 6×8 block of the row-major c (stride ldc)
// the product of a packed 6×k sliver a and a packed 8×k sliver b:
//
//	c[r·ldc + j] −= Σ_{p<k} a[6p+r] · b[8p+j],   r < 6, j < 8,
//
// each sum accumulated in p order with fused multiply-adds. Implemented in
// gemm_amd64.s; callers check hasKernel first.
//
//go:noescape
func kernel6x8(k int, a, b, c *float64, ldc int)
