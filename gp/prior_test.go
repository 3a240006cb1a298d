package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestScaledPriorCentres(t *testing.T) {
	for _, c := range []struct {
		d    int
		want float64
	}{{2, 0.3266}, {3, 0.4}, {6, 0.5657}, {12, 0.8}} {
		p := ScaledPrior(c.d)
		if got := math.Exp(p.LogLengthMean); math.Abs(got-c.want) > 1e-4 || p.LogLengthSD != 0.7 {
			t.Errorf("d=%d: centre %.4f sd %v, want %.4f and 0.7", c.d, got, p.LogLengthSD, c.want)
		}
		if got := math.Exp(p.LogVarMean); math.Abs(got-6) > 1e-12 || p.LogVarSD != 1 {
			t.Errorf("d=%d: signal-variance centre %v sd %v, want 6 and 1", c.d, got, p.LogVarSD)
		}
		if w := defaultPrior(); p.LogNoiseMean != w.LogNoiseMean || p.LogNoiseSD != w.LogNoiseSD {
			t.Errorf("d=%d: the noise prior must be DefaultPrior's", c.d)
		}
	}
}

// Data that barely vary along x1 (a narrow band of x1, as when every
// evaluation sits on one face of the cube) make the weak prior call x1
// irrelevant (ℓ1 of several unit-cube widths); the scaled prior keeps ℓ1
// under two widths, so the model still expects x1 to matter.
func TestScaledPriorKeepsNarrowDimension(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n = 15
	X := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range n {
		x1, x2 := 0.05*rng.Float64(), rng.Float64()
		X.Set(i, 0, x1)
		X.Set(i, 1, x2)
		y[i] = math.Sin(6*x2) + 0.3*x1
	}
	ell := func(p Prior) float64 {
		g, err := Fit(X, y, FitSettings{Prior: &p})
		if err != nil {
			t.Fatal(err)
		}
		return math.Exp(g.Kernel().Params()[0])
	}
	weak, scaled := ell(defaultPrior()), ell(ScaledPrior(2))
	t.Logf("ℓ1: weak prior %.3g, scaled prior %.3g", weak, scaled)
	if !(weak > 3 && scaled < 2) {
		t.Fatalf("ℓ1 = %.3g with the weak prior (want > 3) and %.3g with the scaled one (want < 2)", weak, scaled)
	}
}
