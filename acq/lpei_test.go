package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestLPEIGradient checks the gradient of the penalized log EI against
// central differences with two penalization centres close enough to the
// test point that the penalizers change both the value and the gradient.
func TestLPEIGradient(t *testing.T) {
	s := testState(t, 15, 3, 2)
	L := lipschitz(s.GP, s.Rand)
	plain := &lpFunc{g: s.GP, best: s.Best, L: L}
	x := []float64{0.21, 0.64, 0.48}
	X := mat.NewDense(1, 3, x)
	// Centres at distance r chosen so that L·r is comparable to the
	// penalizers' scale |M − μ(x_k)| + σ(x_k), not in their saturated tails.
	f := plain.with([]float64{0.21 + 0.5/L, 0.64, 0.48 - 0.3/L})
	f = f.with([]float64{0.21 - 0.2/L, 0.64 + 0.6/L, 0.48})
	if d := plain.Eval(X, nil) - f.Eval(X, nil); !(d > 0.05) {
		t.Fatalf("penalizers lower log EI by only %g at the test point: they are not exercised", d)
	}
	checkGrad(t, "lp-ei", f, X, 1e-6, 1e-5)

	// The gradient of the penalty alone (penalized minus plain) must also
	// match, so a wrong penalty gradient cannot hide behind a large log-EI
	// gradient.
	G, G0 := mat.NewDense(1, 3, nil), mat.NewDense(1, 3, nil)
	f.Eval(X, G)
	plain.Eval(X, G0)
	pen := funcOf(func(X, g *mat.Dense) float64 {
		if g == nil {
			return f.Eval(X, nil) - plain.Eval(X, nil)
		}
		a, b := mat.NewDense(1, 3, nil), mat.NewDense(1, 3, nil)
		v := f.Eval(X, a) - plain.Eval(X, b)
		g.Sub(a, b)
		return v
	})
	checkGrad(t, "lp-ei penalty", pen, X, 1e-6, 1e-5)
}

// TestLPEISpreadsBatch checks that local penalization spreads its batch: an
// unpenalized greedy batch (maximizing the same log EI q times without
// updating anything) repeats one point, while LP-EI's points are pairwise
// distinct and their smallest pairwise distance is much larger.
func TestLPEISpreadsBatch(t *testing.T) {
	const q = 4
	ctx := context.Background()
	s := testState(t, 10, 2, 7)
	set := OptimizeSettings{RawSamples: 256, Restarts: 4, Workers: 1}

	B, err := localPenalization{Settings: set}.Propose(ctx, s, q)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := B.Dims(); r != q || c != 2 {
		t.Fatalf("lp-ei returned a %d×%d batch, want %d×2", r, c, q)
	}

	rng := rand.New(rand.NewPCG(7, 99))
	plain := &lpFunc{g: s.GP, best: s.Best, L: lipschitz(s.GP, rng)}
	U := mat.NewDense(q, 2, nil)
	for j := 0; j < q; j++ {
		x, _, err := Maximize(ctx, plain, 1, 2, set, rng)
		if err != nil {
			t.Fatal(err)
		}
		U.SetRow(j, x.RawRowView(0))
	}

	dl, du := minPairDist(B), minPairDist(U)
	t.Logf("smallest pairwise distance: lp-ei %.3g, unpenalized %.3g", dl, du)
	if !(dl > 0.05) {
		t.Errorf("lp-ei batch has points %.3g apart (near duplicates):\n%v", dl, mat.Formatted(B))
	}
	if !(dl > 10*du) {
		t.Errorf("lp-ei batch (min distance %.3g) is not spread more than the unpenalized one (%.3g)", dl, du)
	}
}

// minPairDist returns the smallest Euclidean distance between two rows.
func minPairDist(X *mat.Dense) float64 {
	r, _ := X.Dims()
	best := math.Inf(1)
	for i := 0; i < r; i++ {
		for j := i + 1; j < r; j++ {
			d := 0.0
			for k, v := range X.RawRowView(i) {
				d += (v - X.At(j, k)) * (v - X.At(j, k))
			}
			best = math.Min(best, math.Sqrt(d))
		}
	}
	return best
}
