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

// BestMeanOnSlice is the evaluated point with the largest posterior mean once
// moved onto the pinned slice: without pins the evaluated point itself
// (BestMean's), with pins the argmax over the moved points, found here
// by predicting each one alone.
func TestBestMeanOnSlice(t *testing.T) {
	g := fixtureGP(t, 14, 3, 4)
	X := g.X()
	c, m := BestMeanOnSlice(g, nil)
	best, means := BestMean(g)
	if !mat.Equal(c, mat.NewDense(1, 3, X.RawRowView(best))) || m != means[best] {
		t.Errorf("without pins: %v (mean %v), want evaluated point %v (mean %v)", c.RawRowView(0), m, X.RawRowView(best), means[best])
	}
	pinned := []float64{math.NaN(), 0.7, math.NaN()}
	c, m = BestMeanOnSlice(g, pinned)
	want, wantMean := -1, math.Inf(-1)
	for i := range X.RawMatrix().Rows {
		x := append([]float64(nil), X.RawRowView(i)...)
		x[1] = 0.7
		if mu, _ := g.MeanVar(x); mu > wantMean {
			want, wantMean = i, mu
		}
	}
	if c.At(0, 1) != 0.7 || c.At(0, 0) != X.At(want, 0) || c.At(0, 2) != X.At(want, 2) {
		t.Errorf("with a pin: %v, want evaluated point %d moved onto the slice", c.RawRowView(0), want)
	}
	if math.Abs(m-wantMean) > 1e-12 {
		t.Errorf("with a pin: mean %v, want %v", m, wantMean)
	}
	if want == best {
		t.Log("the pin does not change which point is best: the test checks less")
	}
}
