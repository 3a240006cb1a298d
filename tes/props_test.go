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

// models returns TES_ep and TES_sp models on the same X* for a small
// setting (2-d, 10 observations, |X*| = 5).
func models(t *testing.T, seed uint64) (*gp.GP, *Model, *Model) {
	t.Helper()
	g := toyGP(t, seed, 10, 2, 0.3, 1e-3)
	rng := rand.New(rand.NewPCG(seed, 17))
	ep, err := NewModel(context.Background(), g, rng, 5, nil, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := modelAt(context.Background(), g, rng, ep.XStar, Settings{Method: SP})
	if err != nil {
		t.Fatal(err)
	}
	return g, ep, sp
}

// nearXStar returns q points around X* (perturbed by sd in each coordinate).
func nearXStar(rng *rand.Rand, m *Model, q int, sd float64) *mat.Dense {
	k, d := m.XStar.Dims()
	X := mat.NewDense(q, d, nil)
	for i := 0; i < q; i++ {
		for j := 0; j < d; j++ {
			X.Set(i, j, clamp01(m.XStar.At(rng.IntN(k), j)+sd*rng.NormFloat64()))
		}
	}
	return X
}

// TestAlphaBounds: 0 ≤ α ≤ H(x*) up to the estimator's error, for both
// methods (TES_sp with importance and grouped sample sets), batch sizes
// 1–4 and batches near and far from X*.
func TestAlphaBounds(t *testing.T) {
	g, ep, sp := models(t, 51)
	rng := rand.New(rand.NewPCG(52, 53))
	grouped, err := modelAt(context.Background(), g, rng, ep.XStar, Settings{Method: SP, Sampling: grouping})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*Model{ep, sp, grouped} {
		h := m.Entropy()
		for q := 1; q <= 4; q++ {
			f, err := m.Func(q, nil, rng)
			if err != nil {
				t.Fatal(err)
			}
			for trial := 0; trial < 6; trial++ {
				var X *mat.Dense
				if trial%2 == 0 {
					X = nearXStar(rng, m, q, 0.05)
				} else {
					X = randBatch(rng, q, 2)
				}
				a, se, err := f.Estimate(X)
				if err != nil {
					t.Fatal(err)
				}
				if a < -3*se-1e-9 || a > h+1e-9 {
					t.Errorf("%v q=%d: α = %.5f ± %.5f outside [0, H = %.5f]", m.settings.Method, q, a, se, h)
				}
			}
		}
	}
}

// TestAlphaVanishesFarFromXStar: with a short length-scale, a query many
// length-scales away from every x* is uncorrelated with f_X*, so α ≈ 0
// (Fig. 3b's observation), while a query at an x* is informative.
func TestAlphaVanishesFarFromXStar(t *testing.T) {
	X := mat.NewDense(3, 1, []float64{0.05, 0.5, 0.95})
	g, err := gp.New(gp.NewSE([]float64{0.03}, 1), 1e-3, X, []float64{0.2, -0.1, 0.4})
	if err != nil {
		t.Fatal(err)
	}
	xs := mat.NewDense(4, 1, []float64{0.2, 0.3, 0.7, 0.8})
	far := mat.NewDense(1, 1, []float64{0.5 + 0.001}) // ≥ 6.6 ℓ from every x*
	for _, method := range []method{EP, SP} {
		rng := rand.New(rand.NewPCG(54, uint64(method)))
		m, err := modelAt(context.Background(), g, rng, xs, Settings{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		f, err := m.Func(1, nil, rng)
		if err != nil {
			t.Fatal(err)
		}
		aFar := f.Eval(far, nil)
		aNear := f.Eval(mat.NewDense(1, 1, []float64{0.3}), nil)
		if aFar > 1e-6 || aFar < -1e-9 {
			t.Errorf("%v: α far from X* = %g, want ≈ 0", method, aFar)
		}
		if aNear < 0.05 {
			t.Errorf("%v: α at an x* = %g, want clearly positive", method, aNear)
		}
	}
}

// TestAlphaMonotoneInBatch: adding a point to a batch never lowers α beyond
// the estimators' errors (information never hurts).
func TestAlphaMonotoneInBatch(t *testing.T) {
	_, ep, sp := models(t, 55)
	rng := rand.New(rand.NewPCG(56, 57))
	for _, m := range []*Model{ep, sp} {
		funcs := make([]*Func, 5)
		for q := 1; q <= 4; q++ {
			f, err := m.Func(q, nil, rng)
			if err != nil {
				t.Fatal(err)
			}
			funcs[q] = f
		}
		for trial := 0; trial < 4; trial++ {
			B := nearXStar(rng, m, 4, 0.08)
			prev, prevSE := 0.0, 0.0
			for q := 1; q <= 4; q++ {
				a, se, err := funcs[q].Estimate(B.Slice(0, q, 0, 2).(*mat.Dense))
				if err != nil {
					t.Fatal(err)
				}
				if a < prev-3*math.Hypot(se, prevSE)-1e-6 {
					t.Errorf("%v: α(first %d) = %.5f ± %.5f < α(first %d) = %.5f ± %.5f", m.settings.Method, q, a, se, q-1, prev, prevSE)
				}
				prev, prevSE = a, se
			}
		}
	}
}

// TestAlphaPermutationInvariant: permuting the batch leaves α unchanged.
// The exact α is invariant; the fixed-base-point estimate is invariant in
// distribution (base points are not permuted along), so the two orders
// agree within 3 combined standard errors (quadrature at q = 2: to 1e-3).
func TestAlphaPermutationInvariant(t *testing.T) {
	_, ep, sp := models(t, 58)
	rng := rand.New(rand.NewPCG(59, 60))
	for _, m := range []*Model{ep, sp} {
		for _, q := range []int{2, 4} {
			f, err := m.Func(q, nil, rng)
			if err != nil {
				t.Fatal(err)
			}
			B := nearXStar(rng, m, q, 0.05)
			P := mat.NewDense(q, 2, nil)
			for i := 0; i < q; i++ {
				P.SetRow(i, B.RawRowView(q-1-i))
			}
			a1, se1, _ := f.Estimate(B)
			a2, se2, _ := f.Estimate(P)
			tol := 3*math.Hypot(se1, se2) + 1e-3
			if math.Abs(a1-a2) > tol {
				t.Errorf("%v q=%d: α = %.5f vs %.5f after reversing the batch (tol %.5f)", m.settings.Method, q, a1, a2, tol)
			}
		}
	}
}

// TestOneDimWeaklyCorrelatedPicksXStar reproduces Fig. 3b: with a short
// length-scale, f at the trusted maximizers is weakly correlated and both
// TES_sp and TES_ep choose a query at (within 0.1 length-scale of) a member
// of X*. The optimizer starts from X* itself (Func.Starts), so the test also
// scans α on a grid over [0, 1] (step ℓ/80 for TES_ep, ≈ ℓ/10 for TES_sp),
// which knows nothing of X*: the grid's argmax must lie within 0.1 ℓ of a
// member of X* too, and the optimizer's value must not fall below the
// grid's best by more than 1e-6.
func TestOneDimWeaklyCorrelatedPicksXStar(t *testing.T) {
	const ell = 0.04
	X := mat.NewDense(4, 1, []float64{0.1, 0.35, 0.6, 0.9})
	g, err := gp.New(gp.NewSE([]float64{ell}, 1), 1e-4, X, []float64{0.3, 0.5, 0.1, 0.4})
	if err != nil {
		t.Fatal(err)
	}
	xs := mat.NewDense(4, 1, []float64{0.22, 0.47, 0.75, 0.8})
	for _, method := range []method{EP, SP} {
		rng := rand.New(rand.NewPCG(61, uint64(method)))
		// 64 samples per x* keep TES_sp's part of the test quick.
		m, err := modelAt(context.Background(), g, rng, xs, Settings{Method: method, SPSamples: 64})
		if err != nil {
			t.Fatal(err)
		}
		f, err := m.Func(1, nil, rng)
		if err != nil {
			t.Fatal(err)
		}
		x, v, err := acq.Maximize(context.Background(), f, 1, 1, optimizeDefaults(acq.OptimizeSettings{}, 1), rng)
		if err != nil {
			t.Fatal(err)
		}
		if d := distToXStar(x.At(0, 0), xs); d > 0.1*ell {
			t.Errorf("%v: α is maximized at %.4f (α = %.4f), %.4f from the nearest x*", method, x.At(0, 0), v, d)
		}
		// Cell midpoints (i + ½)/n; neither n puts one exactly on an x*
		// (checked below). α_ep costs microseconds per point: step ℓ/80.
		// α_sp costs ~|F|² (milliseconds) per point: step ≈ ℓ/10, so every
		// point of [0, 1] is within the tolerance 0.1 ℓ of the grid.
		// Its peaks at X* are spikes ~ℓ/40 wide at half height (the
		// small-set upward bias noted in the package doc), but α_sp within
		// ℓ/20 of an x* (≥ 0.35 here) still exceeds it beyond ℓ/10 (≤ 0.29
		// on a 1000-point scan), so the grid's argmax lands next to an x*.
		steps := 2000
		if method == SP {
			steps = 260
		}
		gx, gv := 0.0, math.Inf(-1)
		for i := range steps {
			u := (float64(i) + 0.5) / float64(steps)
			if distToXStar(u, xs) < 1e-9 {
				t.Fatalf("grid point %v is a member of X*", u)
			}
			if a := f.Eval(mat.NewDense(1, 1, []float64{u}), nil); a > gv {
				gx, gv = u, a
			}
		}
		t.Logf("%v: optimizer x = %.4f (α = %.5f), grid argmax %.4f (α = %.5f)", method, x.At(0, 0), v, gx, gv)
		if d := distToXStar(gx, xs); d > 0.1*ell {
			t.Errorf("%v: grid argmax of α at %.4f (α = %.4f) is %.4f from the nearest x*", method, gx, gv, d)
		}
		if v < gv-1e-6 {
			t.Errorf("%v: optimizer's α %.6f below the grid's best %.6f", method, v, gv)
		}
	}
}

// distToXStar is the distance from u to the nearest row of the 1-d xs.
func distToXStar(u float64, xs *mat.Dense) float64 {
	k, _ := xs.Dims()
	best := math.Inf(1)
	for i := range k {
		best = math.Min(best, math.Abs(u-xs.At(i, 0)))
	}
	return best
}

// TestQuadratureNodesConverged: the default Gauss–Hermite rules agree with
// an 80-node rule to 1e-3 at q = 1.
func TestQuadratureNodesConverged(t *testing.T) {
	_, ep, sp := models(t, 62)
	rng := rand.New(rand.NewPCG(63, 64))
	for _, m := range []*Model{ep, sp} {
		f, err := m.Func(1, nil, rng)
		if err != nil {
			t.Fatal(err)
		}
		old := m.settings.GHNodes
		m.settings.GHNodes = 80
		fr, err := m.Func(1, nil, rng)
		m.settings.GHNodes = old
		if err != nil {
			t.Fatal(err)
		}
		for trial := 0; trial < 5; trial++ {
			X := nearXStar(rng, m, 1, 0.05)
			if a, b := f.Eval(X, nil), fr.Eval(X, nil); math.Abs(a-b) > 1e-3 {
				t.Errorf("%v: %d-node α %.6f vs 80-node %.6f", m.settings.Method, old, a, b)
			}
		}
	}
}
