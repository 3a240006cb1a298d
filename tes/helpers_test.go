package tes

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// toyGP returns a GP with an SE kernel (length-scale ell, unit variance) on
// n uniform points in [0,1]^d observing a smooth test function with noise
// variance noise.
func toyGP(t testing.TB, seed uint64, n, d int, ell, noise float64) *gp.GP {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			v := rng.Float64()
			X.Set(i, j, v)
			s += math.Sin(5*v+float64(j)) + 0.5*math.Cos(9*v*v)
		}
		y[i] = s/math.Sqrt(float64(d)) + math.Sqrt(noise)*rng.NormFloat64()
	}
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = ell
	}
	g, err := gp.New(gp.NewSE(ls, 1), noise, X, y)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// randBatch returns q uniform points in [0,1]^d.
func randBatch(rng *rand.Rand, q, d int) *mat.Dense {
	b := mat.NewDense(q, d, nil)
	for i := 0; i < q; i++ {
		for j := 0; j < d; j++ {
			b.Set(i, j, rng.Float64())
		}
	}
	return b
}
