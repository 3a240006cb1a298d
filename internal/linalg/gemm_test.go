package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gemmSubNT agrees with a naive triple loop on sizes that leave partial
// register blocks in every direction, with strides wider than the rows.
func TestGemmSubNTMatchesNaive(t *testing.T) {
	if !hasKernel {
		t.Skip("no assembly micro-kernel on this CPU/build")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][3]int{{1, 1, 1}, {6, 8, 1}, {7, 9, 5}, {13, 17, 0}, {5, 3, 31}, {128, 128, 128}, {131, 77, 129}, {12, 16, 64}} {
		m, n, k := sz[0], sz[1], sz[2]
		lda, ldb, ldc := k+3, k+1, n+2
		a := randSlice(rng, m*lda)
		b := randSlice(rng, n*ldb)
		c := randSlice(rng, m*ldc)
		want := append([]float64(nil), c...)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for p := 0; p < k; p++ {
					s += a[i*lda+p] * b[j*ldb+p]
				}
				want[i*ldc+j] -= s
			}
		}
		gemmSubNT(m, n, k, a, lda, b, ldb, c, ldc)
		for i := range c {
			tol := 1e-13 * float64(k+1)
			if math.Abs(c[i]-want[i]) > tol {
				t.Fatalf("m,n,k=%d,%d,%d: entry %d (row %d col %d) is %v, want %v", m, n, k, i, i/ldc, i%ldc, c[i], want[i])
			}
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = 2*rng.Float64() - 1
	}
	return x
}
