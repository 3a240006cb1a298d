package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/problems/testfunc"
)

// refineFixture: a late state of a constrained Hartmann-6 study — 24
// uniform points and 15 in the global mode's basin (about 0.08 from its
// maximizer), all feasible under a constraint that holds everywhere
// observed.
func refineFixture(t testing.TB, seed uint64) *MultiState {
	const d, far, near = 6, 24, 15
	h := testfunc.Hartmann6()
	c := h.Maximizers[0]
	rng := rand.New(rand.NewPCG(seed, 9))
	X := mat.NewDense(far+near, d, nil)
	for i := 0; i < far+near; i++ {
		for j := 0; j < d; j++ {
			if i < far {
				X.Set(i, j, rng.Float64())
			} else {
				X.Set(i, j, min(1, max(0, c[j]+0.08/math.Sqrt(d)*rng.NormFloat64())))
			}
		}
	}
	eval := func(x []float64) float64 { v, _ := h.Eval(x); return v }
	s := multiFixture(t, X, []OutputKind{Objective, Constraint}, []func(x []float64) float64{
		eval,
		func(x []float64) float64 { return 7 - x[0] - x[1] },
	}, seed)
	return s
}

// nearBestStarts lists the feasible points best by the objective's mean
// first, each followed by its perturbations, all inside the cube.
func TestNearBestStarts(t *testing.T) {
	s := constrainedToy(t, 1)
	obj, con, _ := kindsOf(s)
	starts := nearBestStarts(s, feasibleByMean(s, s.Outputs[obj[0]].GP, con))
	if want := nearBestPoints * (1 + len(nearBestJitter)); len(starts) != want {
		t.Fatalf("%d starts, want %d", len(starts), want)
	}
	// Feasible (x ≤ 0.7) by observation, best first: 0.55, 0.42, 0.3.
	for i, want := range []float64{0.55, 0.42, 0.3} {
		got := starts[i*(1+len(nearBestJitter))].At(0, 0)
		if got != want {
			t.Errorf("start %d at %v, want the evaluated point %v", i, got, want)
		}
	}
	for _, B := range starts {
		if x := B.At(0, 0); x < 0 || x > 1 {
			t.Errorf("start %v outside the cube", x)
		}
	}
}

// The starts never lose to the raw samples alone — the same search, the
// same random stream, with and without them — and on late states of a
// Hartmann-6 study they find higher EI × P(feasible) than the raw samples
// alone (here on 3 of 6 seeds).
func TestCEIStartsHelp(t *testing.T) {
	better := 0
	for seed := uint64(1); seed <= 6; seed++ {
		s := refineFixture(t, seed)
		obj, con, thr := kindsOf(s)
		gps := []*gp.GP{s.Outputs[0].GP, s.Outputs[1].GP}
		best, _ := feasibleBest(s, gps[obj[0]], con)
		alpha := func(starts []*mat.Dense) float64 {
			f := &ceiFunc{gps: gps, obj: obj[0], con: con, thr: thr, best: best, improve: true, starts: starts}
			_, v, err := Maximize(context.Background(), f, 1, 6, OptimizeSettings{Workers: 1}, rand.New(rand.NewPCG(seed, 7)))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		with, without := alpha(nearBestStarts(s, feasibleByMean(s, gps[obj[0]], con))), alpha(nil)
		t.Logf("seed %d: α %.4g with the starts, %.4g without", seed, with, without)
		if with < without-1e-9 {
			t.Errorf("seed %d: α %.4g with the starts < %.4g without", seed, with, without)
		}
		if with > without+0.1 {
			better++
		}
	}
	if better < 2 {
		t.Errorf("the starts raised α on %d of 6 seeds, want ≥ 2", better)
	}
}
