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

// stuckGP is a GP in 4-D whose data sit mostly on one local mode: 24 points
// scattered around a = (0.3,…) of a two-bump function whose higher bump, at
// b = (0.75,…), only 4 space-filling points see. Sample paths then often
// peak far from the data, which a search started near the incumbent misses.
func stuckGP(t *testing.T) *gp.GP {
	t.Helper()
	const d = 4
	rng := rand.New(rand.NewPCG(5, 6))
	f := func(x []float64) float64 {
		da, db := 0.0, 0.0
		for _, v := range x {
			da += (v - 0.3) * (v - 0.3)
			db += (v - 0.75) * (v - 0.75)
		}
		return math.Exp(-da/0.05) + 1.3*math.Exp(-db/0.02)
	}
	var rows [][]float64
	for i := 0; i < 24; i++ {
		x := make([]float64, d)
		for j := range x {
			x[j] = min(max(0.3+0.08*rng.NormFloat64(), 0), 1)
		}
		rows = append(rows, x)
	}
	for i := 0; i < 4; i++ {
		x := make([]float64, d)
		for j := range x {
			x[j] = (float64((i+j)%4) + rng.Float64()) / 4
		}
		rows = append(rows, x)
	}
	X := mat.NewDense(len(rows), d, nil)
	y := make([]float64, len(rows))
	for i, r := range rows {
		X.SetRow(i, r)
		y[i] = f(r)
	}
	g, err := gp.New(gp.NewSE([]float64{0.25, 0.25, 0.25, 0.25}, 0.5), 1e-4, X, y)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestTrustedSearchFindsPathMaxima checks the default sample-path search of
// trustedMaximizers against an exhaustive one (2,048 raw samples, 20
// restarts) on the same paths: the default must reach the path's global
// maximum (within 1e-3) on at least 75% of them. This data set is harder
// than the Hartmann-4 studies that prompted the test: the default misses 5
// of these 40 paths, the old default of one restart 23, which concentrated
// X* on the incumbent's mode.
func TestTrustedSearchFindsPathMaxima(t *testing.T) {
	g := stuckGP(t)
	s := trustedSettings{}.withDefaults()
	thorough := acq.OptimizeSettings{RawSamples: 2048, Restarts: 20, MaxIter: 200}
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 40
	paths, err := g.SamplePaths(rng, n, s.Features)
	if err != nil {
		t.Fatal(err)
	}
	cands := bestObserved(g, s.Candidates)
	ctx := context.Background()
	misses := 0
	for i, p := range paths {
		_, got, err := maximizePath(ctx, p, cands, s, rand.New(rand.NewPCG(uint64(i), 1)))
		if err != nil {
			t.Fatal(err)
		}
		exhaustive := s
		exhaustive.Optimize = thorough
		_, best, err := maximizePath(ctx, p, cands, exhaustive, rand.New(rand.NewPCG(uint64(i), 2)))
		if err != nil {
			t.Fatal(err)
		}
		if got < best-1e-3 {
			misses++
		}
	}
	t.Logf("default search missed the global maximum of %d of %d paths", misses, n)
	if misses > n/4 {
		t.Errorf("default search missed the global maximum of %d of %d paths (want ≤ %d)", misses, n, n/4)
	}
}
