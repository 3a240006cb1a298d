//go:build !amd64 || purego

package linalg

// hasKernel is false where there is no assembly micro-kernel; the blocked
// Cholesky then uses gonum's Gemm for its trailing updates.
const hasKernel = false

func kernel6x8(k int, a, b, c *float64, ldc int) {
	panic("linalg: kernel6x8 called without an assembly micro-kernel")
}
