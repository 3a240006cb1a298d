package gp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// gpData draws y = f(X) + ε at n uniform points from a GP with kernel k and
// noise variance noise.
func gpData(t testing.TB, k Kernel, noise float64, n int, seed uint64) (*mat.Dense, []float64) {
	t.Helper()
	rng := newRNG(seed)
	X := randDense(rng, n, k.Dim())
	K := CrossCov(k, X, X)
	for i := 0; i < n; i++ {
		K.Set(i, i, K.At(i, i)+noise)
	}
	c, err := choleskyJitter(K.RawMatrix().Data, n)
	if err != nil {
		t.Fatal(err)
	}
	z := randVec(rng, n)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		y[i] = dot(c.l[i*n:i*n+i+1], z[:i+1])
	}
	return X, y
}

// MLE on data from a GP with known hyper-parameters (d=2, n=200): the
// length-scales are recovered within 30% and the fitted LML is at least
// the LML at the true hyper-parameters.
func TestFitRecoversLengthscales(t *testing.T) {
	truth := NewSE([]float64{0.15, 0.4}, 1.0)
	const noise = 0.01
	X, y := gpData(t, truth, noise, 200, 51)
	g, err := Fit(X, y, FitSettings{NoPrior: true})
	if err != nil {
		t.Fatal(err)
	}
	got := g.Kernel().(*SE).Lengthscales()
	for i, want := range truth.Lengthscales() {
		if math.Abs(got[i]-want) > 0.3*want {
			t.Errorf("ℓ_%d = %.4f, want %.4f ± 30%%", i, got[i], want)
		}
	}
	gt, err := New(truth, noise, X, y)
	if err != nil {
		t.Fatal(err)
	}
	if g.logMarginalLikelihood() < gt.logMarginalLikelihood() {
		t.Errorf("fitted LML %.4f < LML at truth %.4f", g.logMarginalLikelihood(), gt.logMarginalLikelihood())
	}
	t.Logf("fit: ℓ=%.4f σ_s²=%.4f σ_n²=%.5f LML=%.3f (truth LML %.3f)", got, g.Kernel().Variance(), g.NoiseVar(),
		g.logMarginalLikelihood(), gt.logMarginalLikelihood())
	// The gradient vanishes at an interior optimum.
	grad, err := g.logMarginalLikelihoodGrad()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range grad {
		if math.Abs(v) > 1e-2*float64(g.N()) {
			t.Errorf("LML gradient[%d] = %g at the fitted optimum", i, v)
		}
	}
}

// Matérn-5/2: in a fixed domain only σ_s²/ℓ^5-type combinations are
// consistently estimable (infill asymptotics), so the check is on the
// likelihood: the fit must reach at least the LML at the truth.
func TestFitMatern(t *testing.T) {
	truth := NewMatern52([]float64{0.3, 0.2}, 1.0)
	X, y := gpData(t, truth, 0.01, 150, 52)
	g, err := Fit(X, y, FitSettings{Kernel: NewMatern52([]float64{0.5, 0.5}, 1), NoPrior: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Kernel().(*Matern52); !ok {
		t.Fatalf("fitted kernel %T, want *Matern52", g.Kernel())
	}
	gt, err := New(truth, 0.01, X, y)
	if err != nil {
		t.Fatal(err)
	}
	if g.logMarginalLikelihood() < gt.logMarginalLikelihood() {
		t.Errorf("fitted LML %.4f < LML at truth %.4f", g.logMarginalLikelihood(), gt.logMarginalLikelihood())
	}
	t.Logf("fit: ℓ=%.4f σ_s²=%.4f σ_n²=%.5f LML=%.3f (truth LML %.3f)", g.Kernel().(*Matern52).Lengthscales(),
		g.Kernel().Variance(), g.NoiseVar(), g.logMarginalLikelihood(), gt.logMarginalLikelihood())
}

// FixedNoise keeps σ_n² fixed; a warm start from the optimum stays there.
func TestFitFixedNoiseAndWarm(t *testing.T) {
	truth := NewSE([]float64{0.2, 0.3, 0.5}, 1.0)
	X, y := gpData(t, truth, 1e-4, 60, 53)
	cold, err := Fit(X, y, FitSettings{FixedNoise: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	if cold.NoiseVar() != 1e-4 {
		t.Errorf("noise %g, want fixed 1e-4", cold.NoiseVar())
	}
	warm, err := Fit(X, y, FitSettings{FixedNoise: 1e-4, Warm: cold})
	if err != nil {
		t.Fatal(err)
	}
	if d := warm.logMarginalLikelihood() - cold.logMarginalLikelihood(); math.Abs(d) > 1e-3*math.Abs(cold.logMarginalLikelihood())+1e-3 {
		t.Errorf("warm start from the optimum moved the LML by %g", d)
	}
	// Warm start after adding points works and is at least as good as the
	// warm start's own hyper-parameters.
	X2, y2 := gpData(t, truth, 1e-4, 70, 53)
	w2, err := Fit(X2, y2, FitSettings{FixedNoise: 1e-4, Warm: cold})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := New(cold.Kernel(), 1e-4, X2, y2)
	if w2.logMarginalLikelihood() < base.logMarginalLikelihood()-1e-9 {
		t.Errorf("warm fit LML %g below its start %g", w2.logMarginalLikelihood(), base.logMarginalLikelihood())
	}
}

// Tiny data: the weak priors keep the fit away from degenerate solutions.
func TestFitTinyData(t *testing.T) {
	cases := map[string]struct {
		X *mat.Dense
		y []float64
	}{
		"n=1":           {mat.NewDense(1, 2, []float64{0.3, 0.7}), []float64{0}},
		"n=2":           {mat.NewDense(2, 2, []float64{0.1, 0.2, 0.8, 0.9}), []float64{-0.7071, 0.7071}},
		"zero-variance": {mat.NewDense(4, 2, []float64{0.1, 0.2, 0.8, 0.9, 0.5, 0.5, 0.3, 0.9}), []float64{0, 0, 0, 0}},
		"duplicates":    {mat.NewDense(4, 2, []float64{0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.6, 0.6}), []float64{1, -1, 0.5, 0.3}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := Fit(c.X, c.y, FitSettings{})
			if err != nil {
				t.Fatal(err)
			}
			b := DefaultBounds()
			for _, l := range g.Kernel().(*SE).Lengthscales() {
				if !(l >= b.Length[0]*0.999 && l <= b.Length[1]*1.001) {
					t.Errorf("ℓ = %g outside bounds", l)
				}
			}
			m, v := g.MeanVar([]float64{0.5, 0.4})
			if math.IsNaN(m) || math.IsNaN(v) || math.IsNaN(g.logMarginalLikelihood()) {
				t.Errorf("NaN output: mean %v var %v lml %v", m, v, g.logMarginalLikelihood())
			}
		})
	}
}

func TestFitErrors(t *testing.T) {
	X := mat.NewDense(2, 1, []float64{0.1, 0.2})
	for name, tc := range map[string]struct {
		X *mat.Dense
		y []float64
		s FitSettings
	}{
		"nil X":        {nil, nil, FitSettings{}},
		"len mismatch": {X, []float64{1}, FitSettings{}},
		"NaN y":        {X, []float64{1, math.NaN()}, FitSettings{}},
		"Inf X":        {mat.NewDense(2, 1, []float64{0.1, math.Inf(1)}), []float64{1, 2}, FitSettings{}},
		"bad noise":    {X, []float64{1, 2}, FitSettings{FixedNoise: -1}},
		"kernel dim":   {X, []float64{1, 2}, FitSettings{Kernel: NewSE([]float64{1, 1}, 1)}},
	} {
		if _, err := Fit(tc.X, tc.y, tc.s); !errors.Is(err, errBadInput) {
			t.Errorf("%s: err = %v, want ErrBadInput", name, err)
		}
	}
}

// A warm start sitting on a bound (noise at its floor) must be able to
// leave it when the new data say so.
func TestFitWarmFromBound(t *testing.T) {
	truth := NewSE([]float64{0.3, 0.3}, 1.0)
	X, y := gpData(t, truth, 0.05, 80, 54)
	b := DefaultBounds()
	warm, err := New(truth, b.Noise[0], X, y)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Fit(X, y, FitSettings{Warm: warm})
	if err != nil {
		t.Fatal(err)
	}
	if g.NoiseVar() < 0.01 || g.NoiseVar() > 0.2 {
		t.Errorf("noise %g after warm start from the floor, want ≈ 0.05", g.NoiseVar())
	}
}

func TestSampleJointEmpty(t *testing.T) {
	g := testProblem(t, NewSE([]float64{0.3, 0.3}, 1), 5, 0.01, 55)
	if s := g.sampleJoint(newRNG(1), randDense(newRNG(2), 3, 2), 0); s != nil {
		t.Errorf("n=0: got %v, want nil", s)
	}
}

// Two observations with the default prior must not collapse. A collapsed
// fit puts ℓ at its lower bound (5e-3): every observation is then
// uncorrelated with everything 0.01 away, the posterior reverts to the prior
// right next to each point, and an acquisition function sees noise. "Well
// above" is ℓ_i ≥ 0.1: 20× the bound (3 nats in log ℓ, two prior SDs), a
// tenth of the unit cube, the shortest scale two points can support; the
// fits below land at 0.3–1.3. σ_s² ≥ 0.1 (1.5 prior SDs below its centre 1)
// keeps the signal from collapsing into noise. Without the prior the close
// opposite pair does collapse (ℓ ≈ 0.01, σ_s² ≈ 0.04), which shows the
// criterion discriminates.
func TestFitTwoPointsNoCollapse(t *testing.T) {
	type tc struct {
		X *mat.Dense
		y []float64
	}
	cases := map[string]tc{
		"far, opposite":   {mat.NewDense(2, 2, []float64{0.1, 0.2, 0.8, 0.9}), []float64{-0.7071, 0.7071}},
		"close, opposite": {mat.NewDense(2, 2, []float64{0.1, 0.2, 0.15, 0.25}), []float64{-0.7071, 0.7071}},
		"far, equal":      {mat.NewDense(2, 2, []float64{0.1, 0.2, 0.8, 0.9}), []float64{0.7071, 0.7071}},
	}
	for seed := uint64(1); seed <= 3; seed++ {
		cases[fmt.Sprintf("d=6 seed %d", seed)] = tc{randDense(newRNG(seed), 2, 6), []float64{-0.7071, 0.7071}}
	}
	for name, c := range cases {
		g, err := Fit(c.X, c.y, FitSettings{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ls := g.Kernel().(*SE).Lengthscales()
		for i, l := range ls {
			if l < 0.1 {
				t.Errorf("%s: ℓ_%d = %.4g collapsed (want ≥ 0.1; all ℓ %.3g)", name, i, l, ls)
			}
		}
		if v := g.Kernel().Variance(); v < 0.1 {
			t.Errorf("%s: σ_s² = %.4g collapsed into noise %.4g", name, v, g.NoiseVar())
		}
	}
	c := cases["close, opposite"]
	g, err := Fit(c.X, c.y, FitSettings{NoPrior: true})
	if err != nil {
		t.Fatal(err)
	}
	if l := g.Kernel().(*SE).Lengthscales(); l[0] >= 0.1 && l[1] >= 0.1 {
		t.Errorf("plain ML on the close pair gave ℓ = %.3g: the no-collapse criterion would not tell the prior's effect", l)
	}
}

// stopAfter is a context whose Err is context.Canceled from its calls-th
// call on: a cancellation at a deterministic point of a fit.
type stopAfter struct {
	context.Context
	calls, after int
}

func (c *stopAfter) Err() error {
	c.calls++
	if c.calls >= c.after {
		return context.Canceled
	}
	return nil
}

func TestFitContextStops(t *testing.T) {
	for _, n := range []int{60, 1100} { // all data, and subset + polish
		X, y := gpData(t, NewSE([]float64{0.3, 0.5}, 1), 1e-3, n, 3)
		for _, after := range []int{1, 5, 40} {
			ctx := &stopAfter{Context: context.Background(), after: after}
			g, err := FitContext(ctx, X, y, FitSettings{})
			if !errors.Is(err, context.Canceled) || g != nil {
				t.Fatalf("n=%d, cancelled at check %d: got (%v, %v), want a context.Canceled error", n, after, g, err)
			}
			// Once done, each remaining start, line search and polish step
			// returns at once: a bounded number of further checks.
			if extra := ctx.calls - after; extra > 200 {
				t.Errorf("n=%d, cancelled at check %d: %d more checks after it", n, after, extra)
			}
		}
	}
	X, y := gpData(t, NewSE([]float64{0.3, 0.5}, 1), 1e-3, 60, 3)
	a, err := Fit(X, y, FitSettings{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := FitContext(&stopAfter{Context: context.Background(), after: math.MaxInt}, X, y, FitSettings{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Kernel().Params(), b.Kernel().Params()) || a.NoiseVar() != b.NoiseVar() {
		t.Errorf("a context never done changed the fit: %v, %v against %v, %v", b.Kernel().Params(), b.NoiseVar(), a.Kernel().Params(), a.NoiseVar())
	}
}
