package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// MaximizeVariance finds the largest posterior variance at least as well
// as a 1/100 grid of [0,1]², and its score's analytic gradient (log σ)
// matches finite differences.
func TestMaximizeVariance(t *testing.T) {
	g := fixtureGP(t, 8, 2, 3)
	top := 0.0
	for i := 0; i <= 100; i++ {
		for j := 0; j <= 100; j++ {
			_, v := g.MeanVar([]float64{float64(i) / 100, float64(j) / 100})
			top = math.Max(top, v)
		}
	}
	x, err := MaximizeVariance(context.Background(), g, OptimizeSettings{}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if _, v := g.MeanVar(x.RawRowView(0)); v < top*(1-1e-9) {
		t.Errorf("variance %.6g at %v, below the grid's %.6g", v, x.RawRowView(0), top)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		checkGrad(t, "log σ", logSD(g), mat.NewDense(1, 2, []float64{rng.Float64(), rng.Float64()}), 1e-6, 1e-4)
	}
}
