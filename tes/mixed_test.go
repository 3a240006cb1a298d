package tes

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// BenchmarkProposeMixed compares one proposal on a mixed space (two
// continuous coordinates and categoricals of 3 and 5 choices, the shape of
// CoCaBO's Func2C) with one on a continuous space of the same dimension,
// n = 40, for the default acquisition and EI. Each iteration makes one
// proposal of each, interleaved so that load on a shared machine hits
// both alike; it reports their times (cont-ms, mixed-ms) and the ratio
// mixed/cont of the totals. Run
//
//	go test -run '^$' -bench ProposeMixed -benchtime 20x ./tes/
func BenchmarkProposeMixed(b *testing.B) {
	for _, name := range []string{"tes", "ei"} {
		b.Run(name, func(b *testing.B) {
			g := toyGP(b, 3, 40, 4, 0.3, 1e-4)
			k := gp.NewMixed([]int{0, 0, 3, 5}, false, []float64{0.3, 0.3, 1, 1}, 1)
			gm, err := gp.New(k, 1e-4, g.X(), g.Y())
			if err != nil {
				b.Fatal(err)
			}
			p, err := acq.Lookup(name, acq.Options{})
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			propose := func(g *gp.GP) time.Duration {
				start := time.Now()
				st := &acq.State{GP: g, Rand: rng, Iter: 1, Best: 1}
				if _, err := p.Propose(context.Background(), st, 1); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			var cont, mixed time.Duration
			b.ResetTimer()
			for range b.N {
				cont += propose(g)
				mixed += propose(gm)
			}
			b.ReportMetric(float64(cont)/1e6/float64(b.N), "cont-ms")
			b.ReportMetric(float64(mixed)/1e6/float64(b.N), "mixed-ms")
			b.ReportMetric(float64(mixed)/float64(cont), "ratio")
		})
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
