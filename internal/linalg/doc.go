// Package linalg holds the numerical primitives the model and acquisition
// packages share, each written once: the Cholesky factorization with its
// jitter policy (serial for small matrices, blocked and parallel above
// BlockedMin, bit-for-bit independent of the number of goroutines), the
// triangular solves on its factor, and the Gaussian Mills ratio by
// continued fraction.
//
// Matrices are dense, row-major []float64 with stride n; a Cholesky factor
// L (A = L Lᵀ) occupies the lower triangle and its strict upper triangle is
// zero.
package linalg
