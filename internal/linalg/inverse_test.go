package linalg

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/lapack/lapack64"
)

// potri is gonum's Potri of the factor l (lower triangle of A⁻¹, upper
// zeroed).
func potri(t *testing.T, l []float64, n int) []float64 {
	w := append([]float64(nil), l...)
	if _, ok := lapack64.Potri(Tri(w, n)); !ok {
		t.Fatal("gonum Potri failed")
	}
	zeroUpper(w, n)
	return w
}

// The blocked inverse agrees with gonum's Potri to 1e-10 relative (the
// kernel matrix with noise 1e-3 has condition number ~1e7), for orders
// that are and are not multiples of the tile; Inverse below BlockedMin is
// Potri bit for bit.
func TestInverseMatchesPotri(t *testing.T) {
	for _, n := range []int{1, 9, blockSize, blockSize + 1, 3*blockSize - 5, BlockedMin + 37} {
		l := potrf(t, kernelMatrix(n, 6, 1e-3, uint64(n)), n)
		want := potri(t, l, n)
		got := append([]float64(nil), l...)
		if !InvertLowerBlocked(got, n, 3) {
			t.Fatalf("n=%d: blocked inverse failed", n)
		}
		lauumBlocked(got, n, 3)
		zeroUpper(got, n)
		if d := maxRelDiff(got, want); d > 1e-10 {
			t.Errorf("n=%d: blocked inverse differs from Potri by %.3g relative", n, d)
		}
		if n < BlockedMin {
			got = append(got[:0], l...)
			Inverse(got, n)
			zeroUpper(got, n)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d: Inverse entry %d is %v, Potri's %v", n, i, got[i], want[i])
				}
			}
		}
	}
}

// The blocked inverse is bit-for-bit the same for every number of workers
// and GOMAXPROCS.
func TestInverseBitwiseAcrossWorkers(t *testing.T) {
	n := 3*blockSize + 45
	if !testing.Short() {
		n = BlockedMin + 2*blockSize + 11
	}
	l := potrf(t, kernelMatrix(n, 6, 1e-4, 9), n)
	sameBitsAcross(t, []int{1, 2, 8}, []int{1, 3}, func(w int) []float64 {
		x := append([]float64(nil), l...)
		InvertLowerBlocked(x, n, w)
		lauumBlocked(x, n, w)
		return x
	})
}

// BenchmarkInverse compares the blocked inverse with gonum's Potri on the
// factor of a Matérn-5/2 kernel matrix.
//
//	go test -run '^$' -bench Inverse -benchtime 3x ./internal/linalg
func BenchmarkInverse(b *testing.B) {
	for _, n := range []int{1000, 2000, 4000} {
		l := make([]float64, n*n)
		if _, err := Cholesky(l, kernelMatrix(n, 6, 1e-3, 1), n); err != nil {
			b.Fatal(err)
		}
		x := make([]float64, n*n)
		b.Run(fmt.Sprintf("ours/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(x, l)
				InvertLowerBlocked(x, n, workers())
				lauumBlocked(x, n, workers())
			}
		})
		b.Run(fmt.Sprintf("gonum/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(x, l)
				lapack64.Potri(Tri(x, n))
			}
		})
	}
}
