package tes

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// TestRegisteredPropose: "tes-ep" and "tes-sp" are registered, propose a
// q×d batch inside the unit cube, reuse the previous X* on the next call,
// and accept pending points.
func TestRegisteredPropose(t *testing.T) {
	g := toyGP(t, 101, 12, 2, 0.3, 1e-3)
	for _, name := range []string{"tes-ep", "tes-sp"} {
		p, err := acq.Lookup(name, acq.Options{Optimize: acq.OptimizeSettings{RawSamples: 16, MaxIter: 30}})
		if err != nil {
			t.Fatal(err)
		}
		p.(*proposer).Scorer.Settings.SPSamples = 32 // keep TES_sp's part quick
		rng := rand.New(rand.NewPCG(101, 102))
		for it, q := range []int{1, 3} {
			st := &acq.State{GP: g, Rand: rng, Iter: it + 1}
			if it == 1 {
				st.Pending = mat.NewDense(1, 2, []float64{0.5, 0.5})
			}
			x, err := p.Propose(context.Background(), st, q)
			if err != nil {
				t.Fatalf("%s q=%d: %v", name, q, err)
			}
			r, c := x.Dims()
			if r != q || c != 2 {
				t.Fatalf("%s: batch is %d×%d, want %d×2", name, r, c, q)
			}
			for _, v := range x.RawMatrix().Data {
				if v < 0 || v > 1 {
					t.Fatalf("%s: batch leaves the unit cube: %v", name, v)
				}
			}
		}
		if m := p.(*proposer).Scorer.lastModel(); m == nil || m.XStar.RawMatrix().Rows == 0 {
			t.Fatalf("%s: no model kept", name)
		}
	}
	if _, err := acq.Lookup("tes-ep", acq.Options{Trusted: -1}); err == nil {
		t.Fatal("negative Trusted accepted")
	}
}

// With a single distinct trusted maximizer α ≡ 0; the proposer then
// evaluates at x* (q = 1) or at x* and small perturbations of it (q > 1)
// instead of returning whatever batch the optimizer happened to end on.
func TestProposeSingleTrustedMaximizer(t *testing.T) {
	g := toyGP(t, 3, 10, 2, 0.3, 1e-3)
	xs := mat.NewDense(1, 2, []float64{0.37, 0.61})
	for _, q := range []int{1, 3} {
		rng := rand.New(rand.NewPCG(5, uint64(q)))
		m, err := modelAt(context.Background(), g, rng, xs, Settings{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := m.Func(q, nil, rng)
		if err != nil {
			t.Fatal(err)
		}
		p := &proposer{Scorer: &scorer{}}
		st := &acq.State{GP: g, Rand: rng}
		x, err := p.maximize(context.Background(), f, st, q)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := x.Dims(); r != q {
			t.Fatalf("q=%d: %d points", q, r)
		}
		if x.At(0, 0) != 0.37 || x.At(0, 1) != 0.61 {
			t.Fatalf("q=%d: first point %v, want x* (0.37, 0.61)", q, mat.Row(nil, 0, x))
		}
		ell := lengthscales(g.Kernel())
		for i := 1; i < q; i++ {
			for j := 0; j < 2; j++ {
				if d := math.Abs(x.At(i, j) - xs.At(0, j)); d > 0.5*ell[j] {
					t.Fatalf("q=%d: point %d is %g from x* in coordinate %d (ℓ=%g)", q, i, d, j, ell[j])
				}
			}
		}
	}
}
