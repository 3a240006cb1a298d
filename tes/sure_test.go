package tes

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// sureGP is a GP the posterior is sure about: a plane rising to the corner
// (1, 1), observed at 12 points, the corner among them, with long
// length-scales.
func sureGP(t *testing.T) *gp.GP {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	X := mat.NewDense(12, 2, nil)
	y := make([]float64, 12)
	for i := range 12 {
		x0, x1 := 1.0, 1.0
		if i > 0 {
			x0, x1 = rng.Float64(), rng.Float64()
		}
		X.SetRow(i, []float64{x0, x1})
		y[i] = 2*x0 + 3*x1 - 2.5
	}
	g, err := gp.New(gp.NewMatern52([]float64{3, 3}, 4), 1e-6, X, y)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// gridVarMax returns the largest posterior variance over a 1/100 grid of
// [0,1]².
func gridVarMax(g *gp.GP) float64 {
	best := 0.0
	for i := 0; i <= 100; i++ {
		for j := 0; j <= 100; j++ {
			_, v := g.MeanVar([]float64{float64(i) / 100, float64(j) / 100})
			best = math.Max(best, v)
		}
	}
	return best
}

// When every trusted maximizer is one point, a single-point query of TES
// (an iteration that is not x̄'s) goes to the largest posterior variance;
// with NoSureExplore, or with a point in flight, it stays TES's, next to
// the corner.
func TestDeliverSureExplores(t *testing.T) {
	ctx := context.Background()
	g := sureGP(t)
	top := gridVarMax(g)
	for _, c := range []struct {
		name    string
		set     deliverSettings
		pending *mat.Dense
		explore bool
	}{
		{"default", deliverSettings{}, nil, true},
		{"NoSureExplore", deliverSettings{NoSureExplore: true}, nil, false},
		{"pending", deliverSettings{}, mat.NewDense(1, 2, []float64{0.5, 0.5}), false},
	} {
		p, err := newDeliver(acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p.Settings = c.set
		st := deliverState(g, 3)
		st.Pending = c.pending
		X, err := p.Propose(ctx, st, 1)
		if err != nil {
			t.Fatal(err)
		}
		if k, _ := p.TES.Scorer.previous(2).Dims(); k != 1 {
			t.Fatalf("%s: %d trusted maximizers, want the test's GP sure of x* (1)", c.name, k)
		}
		x := X.RawRowView(0)
		_, v := g.MeanVar(x)
		if got := v >= top*(1-1e-6); got != c.explore {
			t.Errorf("%s: proposed %v with variance %.4g (grid max %.4g), want max-variance point %v", c.name, x, v, top, c.explore)
		}
	}
}
