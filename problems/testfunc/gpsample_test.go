package testfunc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The expansion's exact covariance equals the SE kernel σ_s² exp(−|τ|²/2ℓ²)
// at every lag the domain [0,10]² can produce. This quantifies the spectral
// approximation error (it is at rounding level, ~1e-15).
func TestGPSampleKernel(t *testing.T) {
	s := drawGPSample(0)
	var worst float64
	for a := 0; a <= 200; a++ {
		for b := 0; b <= 200; b++ {
			t1, t2 := -10+float64(a)/10, -10+float64(b)/10
			k := gpSampleVar * math.Exp(-(t1*t1+t2*t2)/(2*gpSampleLen*gpSampleLen))
			worst = math.Max(worst, math.Abs(s.cov(t1, t2)-k))
		}
	}
	t.Logf("max |k_expansion(τ) − k_SE(τ)| over τ ∈ [−10,10]²: %.3g (k(0) = %g); %d complex coefficients",
		worst, gpSampleVar, len(s.c))
	if worst > 1e-12 {
		t.Errorf("kernel error %g, want < 1e-12", worst)
	}
}

// Across independent draws, f(x) has mean 0, variance σ_s² and the SE
// covariance at a lag: the coefficients are scaled correctly. Each draw is
// stationary on all of R² (period 20), so it is read at 16 points 5ℓ apart
// (correlation e^{−12.5} ≈ 4e-6, negligible) and at the same points shifted
// by a lag τ, giving 16 nearly independent pairs per draw. Tolerances are 4
// standard errors of the Monte-Carlo estimates (≈ 3.6% of σ_s² for the
// variance).
func TestGPSampleMoments(t *testing.T) {
	const draws = 1500
	tau := []float64{0.5, -0.8}
	var n, m1, sxx, sxy float64
	for seed := uint64(0); seed < draws; seed++ {
		s := drawGPSample(1000 + seed)
		for a := 0; a < 4; a++ {
			for b := 0; b < 4; b++ {
				x := []float64{1 + 5*float64(a), 2 + 5*float64(b)}
				fx := s.value(x, nil)
				fy := s.value([]float64{x[0] + tau[0], x[1] + tau[1]}, nil)
				n++
				m1 += fx
				sxx += fx * fx
				sxy += fx * fy
			}
		}
	}
	m1, sxx, sxy = m1/n, sxx/n, sxy/n
	v := gpSampleVar
	k := v * math.Exp(-(tau[0]*tau[0]+tau[1]*tau[1])/2)
	if se := math.Sqrt(v / n); math.Abs(m1) > 4*se {
		t.Errorf("mean %g, want 0 ± %g", m1, 4*se)
	}
	if se := v * math.Sqrt(2/n); math.Abs(sxx-v) > 4*se {
		t.Errorf("second moment %g, want %g ± %g", sxx, v, 4*se)
	}
	// Var(f(x)f(y)) = v² + k² for a zero-mean bivariate Gaussian.
	if se := math.Sqrt((v*v + k*k) / n); math.Abs(sxy-k) > 4*se {
		t.Errorf("cross moment %g, want %g ± %g", sxy, k, 4*se)
	}
}

// A seed always selects the same function; different seeds differ; the
// cached f* is shared.
func TestGPSampleDeterministic(t *testing.T) {
	a, b, c := GPSample(3), GPSample(3), GPSample(4)
	x := []float64{1.234, 5.678}
	if mustEval(t, a, x) != mustEval(t, b, x) || a.Optimum != b.Optimum {
		t.Error("same seed gave different functions")
	}
	if mustEval(t, a, x) == mustEval(t, c, x) {
		t.Error("seeds 3 and 4 gave the same value")
	}
	// A fresh draw (bypassing the cache) reproduces the values bit for bit.
	if fresh := drawGPSample(3); fresh.value(x, nil) != mustEval(t, a, x) {
		t.Error("a fresh draw differs from the cached one")
	}
	a.Maximizers[0][0] = -1 // callers get copies of the cached maximizer
	if GPSample(3).Maximizers[0][0] == -1 {
		t.Error("modifying a returned maximizer changed the cache")
	}
}

// The dense search's grid is fine enough: for many seeds, multistart ascent
// never beats the stored f*.
func TestGPSampleSearchAcrossSeeds(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for seed := uint64(20); seed < 26; seed++ {
		fn := GPSample(seed)
		for i := 0; i < 40; i++ {
			if _, v := refine(fn.grad, uniform(rng, fn), fn.Lower, fn.Upper); v > fn.Optimum+1e-10 {
				t.Errorf("seed %d: ascent reached %.15g > f* = %.15g", seed, v, fn.Optimum)
			}
		}
	}
}

func BenchmarkGPSampleEval(b *testing.B) {
	fn := GPSample(0)
	x := []float64{3.1, 4.2}
	for b.Loop() {
		fn.Eval(x)
	}
}

func BenchmarkGPSampleGrad(b *testing.B) {
	fn := GPSample(0)
	x, g := []float64{3.1, 4.2}, make([]float64, 2)
	for b.Loop() {
		fn.gradient(x, g)
	}
}

// BenchmarkGPSampleSetup measures one draw plus its f* search (what the first
// GPSample(seed) call costs).
func BenchmarkGPSampleSetup(b *testing.B) {
	var seed uint64
	for b.Loop() {
		seed++
		newGPSample(seed)
	}
}

// Regression pin: the draws the paper's experiments run on. Seed 0 is the
// default draw (objective's sample_seed) and the one docs/results uses; seed
// 3 is the documented example of another draw. The values are what the
// sampler computed when the experiments were run (amd64, Go's math
// package); any change to the coefficients, their RNG stream, the
// evaluation or the f* search moves them by far more than 1e-9 and fails
// here, which would silently change every gpsample result.
func TestGPSamplePinned(t *testing.T) {
	const tol = 1e-9
	cases := []struct {
		seed      uint64
		optimum   float64
		maximizer [2]float64
		at        [][3]float64 // x1, x2, f(x)
	}{
		{0, 4.4760810409385066, [2]float64{5.376215420690758, 8.7375873146828695}, [][3]float64{
			{0, 0, -0.75418207598021403},
			{5, 5, 0.20587433712302819},
			{9.75, 1.25, -1.0214881097023518},
		}},
		{3, 4.1708540998722885, [2]float64{3.057485853487115, 9.4638855997517641}, [][3]float64{
			{0, 0, 1.2274584242166597},
			{5, 5, 2.6426444270764362},
			{9.75, 1.25, -0.53676123323210978},
		}},
	}
	for _, c := range cases {
		fn := GPSample(c.seed)
		if math.Abs(fn.Optimum-c.optimum) > tol {
			t.Errorf("seed %d: f* = %.17g, pinned %.17g", c.seed, fn.Optimum, c.optimum)
		}
		if len(fn.Maximizers) != 1 {
			t.Fatalf("seed %d: %d maximizers, want 1", c.seed, len(fn.Maximizers))
		}
		for j, want := range c.maximizer {
			if got := fn.Maximizers[0][j]; math.Abs(got-want) > tol {
				t.Errorf("seed %d: maximizer x%d = %.17g, pinned %.17g", c.seed, j+1, got, want)
			}
		}
		for _, p := range c.at {
			if got := mustEval(t, fn, []float64{p[0], p[1]}); math.Abs(got-p[2]) > tol {
				t.Errorf("seed %d: f(%g, %g) = %.17g, pinned %.17g", c.seed, p[0], p[1], got, p[2])
			}
		}
	}
}
