package classify

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// BenchmarkFit fits the classifier to n points in 6-d of which those with
// x₀ + x₁ > 1.6 (about 8%) failed: its cost per BO iteration of a study with
// failures.
func BenchmarkFit(b *testing.B) {
	for _, n := range []int{250, 500, 1000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			X, ok := failingCorner(n, 6)
			b.ResetTimer()
			for range b.N {
				if _, err := Fit(X, ok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func failingCorner(n, d int) (*mat.Dense, []bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(n, d, nil)
	ok := make([]bool, n)
	for i := range n {
		for j := range d {
			X.Set(i, j, rng.Float64())
		}
		ok[i] = X.At(i, 0)+X.At(i, 1) <= 1.6
	}
	return X, ok
}
