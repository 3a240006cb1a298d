package tes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// BenchmarkProposeMixed compares one proposal on a mixed space (two
// continuous coordinates and categoricals of 3 and 5 choices, the shape of
// CoCaBO's Func2C) with a continuous space of the same dimension, n = 40,
// for the default acquisition and EI. Run
//
//	go test -run '^$' -bench ProposeMixed ./tes/
func BenchmarkProposeMixed(b *testing.B) {
	for _, name := range []string{"tes", "ei"} {
		for _, mixed := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/mixed=%v", name, mixed), func(b *testing.B) {
				g := toyGP(b, 3, 40, 4, 0.3, 1e-4)
				if mixed {
					k := gp.NewMixed([]int{0, 0, 3, 5}, false, []float64{0.3, 0.3, 1, 1}, 1)
					var err error
					if g, err = gp.New(k, 1e-4, g.X(), g.Y()); err != nil {
						b.Fatal(err)
					}
				}
				p, err := acq.Lookup(name, acq.Options{})
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					st := &acq.State{GP: g, Rand: rng, Iter: 1, Best: 1}
					if _, err := p.Propose(context.Background(), st, 1); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// On a mixed kernel, trusted maximizers and x̄ in different choices are
// never duplicates, and the same choice adds no distance.
func TestLengthscalesMixed(t *testing.T) {
	k := gp.NewMixed([]int{0, 3}, false, []float64{0.3, 0.8}, 1)
	ell := lengthscales(k)
	if ell[0] != 0.3 || ell[1] != catScale {
		t.Fatalf("lengthscales %v", ell)
	}
	if d := scaledDist([]float64{0.5, 0.5}, []float64{0.5, 0.5 + 1.0/3}, ell); d < 1e6 {
		t.Fatalf("different choices at distance %v", d)
	}
	if d := scaledDist([]float64{0.5, 0.5}, []float64{0.53, 0.5}, ell); math.Abs(d-0.1) > 1e-12 {
		t.Fatalf("same choice at distance %v, want 0.1", d)
	}
}
