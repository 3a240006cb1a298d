package tes

import (
	"context"
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
		p.(*Proposer).Scorer.Settings.SPSamples = 32 // keep TES_sp's part quick
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
		if m := p.(*Proposer).Scorer.LastModel(); m == nil || m.XStar.RawMatrix().Rows == 0 {
			t.Fatalf("%s: no model kept", name)
		}
	}
	if _, err := acq.Lookup("tes-ep", acq.Options{Trusted: -1}); err == nil {
		t.Fatal("negative Trusted accepted")
	}
}
