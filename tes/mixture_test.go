package tes

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randSPD returns a random n×n SPD matrix (row-major) with eigenvalues
// roughly in [lo, lo+scale].
func randSPD(rng *rand.Rand, n int, lo, scale float64) []float64 {
	b := make([]float64, n*n)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	out := make([]float64, n*n)
	gemm(false, true, scale/float64(n), b, n, n, b, n, n, 0, out)
	for i := 0; i < n; i++ {
		out[i*n+i] += lo
	}
	symmetrize(out, n)
	return out
}

func randMatrix(rng *rand.Rand, r, c int, s float64) []float64 {
	a := make([]float64, r*c)
	for i := range a {
		a[i] = s * rng.NormFloat64()
	}
	return a
}

func bases(n int, b func() basePoints) []basePoints {
	out := make([]basePoints, n)
	for i := range out {
		out[i] = b()
	}
	return out
}

// fdCheck compares analytic ∂α/∂A and ∂α/∂S with central differences
// (symmetric perturbations of S).
func fdCheck(t *testing.T, name string, f func(A, S []float64) float64, A, S, gA, gS []float64, q int) {
	t.Helper()
	const h = 1e-5
	for a := range A {
		old := A[a]
		A[a] = old + h
		fp := f(A, S)
		A[a] = old - h
		fm := f(A, S)
		A[a] = old
		fd := (fp - fm) / (2 * h)
		if math.Abs(fd-gA[a]) > 1e-6+1e-5*math.Abs(fd) {
			t.Errorf("%s: ∂α/∂A[%d] = %.8g, finite difference %.8g", name, a, gA[a], fd)
		}
	}
	for r := 0; r < q; r++ {
		for c := 0; c <= r; c++ {
			or, oc := S[r*q+c], S[c*q+r]
			S[r*q+c], S[c*q+r] = or+h, oc+h
			if r == c {
				S[r*q+c] = or + h
			}
			fp := f(A, S)
			S[r*q+c], S[c*q+r] = or-h, oc-h
			if r == c {
				S[r*q+c] = or - h
			}
			fm := f(A, S)
			S[r*q+c], S[c*q+r] = or, oc
			fd := (fp - fm) / (2 * h)
			an := gS[r*q+c] + gS[c*q+r]
			if r == c {
				an = gS[r*q+c]
			}
			if math.Abs(fd-an) > 1e-6+1e-5*math.Abs(fd) {
				t.Errorf("%s: ∂α/∂S[%d,%d] = %.8g, finite difference %.8g", name, r, c, an, fd)
			}
		}
	}
}
