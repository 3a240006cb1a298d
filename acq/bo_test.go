package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/problems/testfunc"
)

// boRun runs a small BO loop through the public API (gp.Fit, acq.Lookup,
// Propose) on the negated Branin function in [0,1]² with observation noise
// variance 1e-4: 2 uniform initial points, then batches of q until `evals`
// evaluations. Every proposal must have exactly the requested number of
// rows, each in [0,1]². It returns the immediate regret f* − f(x̄) of the
// recommendation x̄ = argmax of the final posterior mean over the evaluated
// points (noise-free f, as in the BoTorch protocol).
func boRun(t *testing.T, name string, o Options, q, evals int, seed uint64) float64 {
	fn := testfunc.Branin()
	p, err := Lookup(name, o)
	if err != nil {
		t.Fatal(err)
	}
	init := rand.New(rand.NewPCG(seed, 1))
	noise := rand.New(rand.NewPCG(seed, 2))
	var xs [][]float64
	var ys []float64
	observe := func(u []float64) {
		v, err := fn.EvalUnit(u)
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, u)
		ys = append(ys, v+0.01*noise.NormFloat64())
	}
	for i := 0; i < 2; i++ {
		observe([]float64{init.Float64(), init.Float64()})
	}
	var g *gp.GP
	fit := func() {
		n := len(ys)
		X := mat.NewDense(n, 2, nil)
		for i, x := range xs {
			X.SetRow(i, x)
		}
		m, sd := meanStd(ys)
		z := make([]float64, n)
		for i, y := range ys {
			z[i] = (y - m) / sd
		}
		g, err = gp.Fit(X, z, gp.FitSettings{Warm: g, FixedNoise: math.Max(1e-4/(sd*sd), 1e-6), Rand: rand.New(rand.NewPCG(seed, uint64(n)))})
		if err != nil {
			t.Fatalf("%s seed %d: fit: %v", name, seed, err)
		}
	}
	for iter := 1; len(ys) < evals; iter++ {
		fit()
		best := math.Inf(-1)
		for _, y := range g.Y() {
			best = math.Max(best, y)
		}
		s := &State{GP: g, Best: best, Iter: iter, Rand: rand.New(rand.NewPCG(seed, 100+uint64(iter)))}
		want := min(q, evals-len(ys))
		B, err := p.Propose(context.Background(), s, want)
		if err != nil {
			t.Fatalf("%s seed %d iter %d: %v", name, seed, iter, err)
		}
		r, c := B.Dims()
		if r != want || c != 2 {
			t.Fatalf("%s seed %d iter %d: proposal is %d×%d, asked for %d×2", name, seed, iter, r, c, want)
		}
		for i := 0; i < r; i++ {
			u := B.RawRowView(i)
			for _, v := range u {
				if v < 0 || v > 1 || math.IsNaN(v) {
					t.Fatalf("%s: proposal %v outside the unit square", name, u)
				}
			}
			observe(append([]float64(nil), u...))
		}
	}
	fit()
	bestMu, rec := math.Inf(-1), xs[0]
	for _, x := range xs {
		if m, _ := g.MeanVar(x); m > bestMu {
			bestMu, rec = m, x
		}
	}
	x, err := fn.ToNative(rec)
	if err != nil {
		t.Fatal(err)
	}
	r, err := fn.Regret(x)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func meanStd(v []float64) (float64, float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	s = math.Sqrt(s / float64(len(v)))
	if s < 1e-12 {
		s = 1
	}
	return m, s
}

// TestBOBeatsRandomOnBranin is the sanity floor of the issue: every baseline,
// run as a BO loop for 30 evaluations, ends with a lower immediate regret
// than random search with the same seeds, averaged over 5 seeds. Batch
// methods run with |B| = 2 so their batch code is exercised.
func TestBOBeatsRandomOnBranin(t *testing.T) {
	const seeds, evals = 5, 30
	o := Options{
		MCSamples:       128,
		MaxValueSamples: 5,
		PathFeatures:    500,
		Optimize:        OptimizeSettings{RawSamples: 128, Restarts: 3, Workers: 1},
	}
	cases := []struct {
		name string
		q    int
	}{
		{"random", 1}, {"ei", 1}, {"pi", 1}, {"ucb", 1}, {"mes", 1}, {"pes", 1},
		{"qei", 2}, {"qei-cl", 2}, {"bucb", 2}, {"lp-ei", 2}, {"ts", 2},
	}
	regret := make(map[string][]float64)
	var mu sync.Mutex
	t.Run("group", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				rs := make([]float64, seeds)
				for s := range rs {
					rs[s] = boRun(t, c.name, o, c.q, evals, uint64(s))
				}
				mu.Lock()
				regret[c.name] = rs
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	avg := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	rnd := avg(regret["random"])
	names := make([]string, 0, len(regret))
	for n := range regret {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%-7s mean immediate regret %.4g  (per seed %.3g)", n, avg(regret[n]), regret[n])
		if n != "random" && !(avg(regret[n]) < rnd) {
			t.Errorf("%s: mean regret %.4g is not below random search's %.4g", n, avg(regret[n]), rnd)
		}
	}
}
