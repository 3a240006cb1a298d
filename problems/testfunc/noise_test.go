package testfunc

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestNoiseDeterministic(t *testing.T) {
	x := []float64{0.25, 0.75}
	z := Noise(42, x)
	if Noise(42, []float64{0.25, 0.75}) != z {
		t.Error("same seed and x gave different noise")
	}
	if Noise(43, x) == z {
		t.Error("seeds 42 and 43 gave the same noise")
	}
	if Noise(42, []float64{0.25, math.Nextafter(0.75, 1)}) == z {
		t.Error("x one ulp apart gave the same noise")
	}
	if Noise(42, []float64{0, 1}) != Noise(42, []float64{math.Copysign(0, -1), 1}) {
		t.Error("−0 and +0 gave different noise")
	}
	if Noise(1, []float64{0.5}) == Noise(1, []float64{0.5, 0}) {
		t.Error("x and x with a trailing 0 gave the same noise")
	}
}

// Over many distinct inputs the deviates have mean 0, variance 1, no
// correlation between neighbours, and Observe adds √σ² times them. Each
// tolerance is 4 standard errors.
func TestNoiseDistribution(t *testing.T) {
	const n = 40000
	const noiseVar = 0.3
	fn := Branin()
	rng := rand.New(rand.NewPCG(7, 8))
	var s1, s2, lag, prev float64
	var r1, r2 float64
	for i := 0; i < n; i++ {
		x := uniform(rng, fn)
		z := Noise(99, x)
		s1 += z
		s2 += z * z
		lag += z * prev
		prev = z
		y, err := fn.Observe(x, noiseVar, 99)
		if err != nil {
			t.Fatal(err)
		}
		e := y - mustEval(t, fn, x)
		if math.Abs(e-math.Sqrt(noiseVar)*z) > 1e-12 {
			t.Fatalf("Observe's noise %g, want √σ²·Noise = %g", e, math.Sqrt(noiseVar)*z)
		}
		r1 += e
		r2 += e * e
	}
	mean, variance := s1/n, s2/n-(s1/n)*(s1/n)
	if se := 1 / math.Sqrt(n); math.Abs(mean) > 4*se {
		t.Errorf("noise mean %g, want 0 ± %g", mean, 4*se)
	}
	if se := math.Sqrt(2.0 / (n - 1)); math.Abs(variance-1) > 4*se {
		t.Errorf("noise variance %g, want 1 ± %g", variance, 4*se)
	}
	if se := 1 / math.Sqrt(n); math.Abs(lag/n) > 4*se {
		t.Errorf("lag-1 correlation %g, want 0 ± %g", lag/n, 4*se)
	}
	ov := r2/n - (r1/n)*(r1/n)
	if se := noiseVar * math.Sqrt(2.0/(n-1)); math.Abs(ov-noiseVar) > 4*se {
		t.Errorf("observation noise variance %g, want %g ± %g", ov, noiseVar, 4*se)
	}
}

func TestObserveBadNoiseVar(t *testing.T) {
	fn := Branin()
	for _, v := range []float64{-1e-4, math.NaN(), math.Inf(1)} {
		if _, err := fn.Observe([]float64{0.5, 0.5}, v, 1); err == nil {
			t.Errorf("noise variance %v: want an error", v)
		}
	}
	y, err := fn.Observe([]float64{0.5, 0.5}, 0, 1)
	if err != nil || y != mustEval(t, fn, []float64{0.5, 0.5}) {
		t.Errorf("noise variance 0: %g, %v; want the noise-free value", y, err)
	}
}

func BenchmarkNoise(b *testing.B) {
	x := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}
	for b.Loop() {
		Noise(1, x)
	}
}
