package tes

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"

	"github.com/tesbo/tesbo/acq"
)

// truncMomentsQuad computes λ and v of truncMoments by Gauss–Legendre
// quadrature of the truncated density written around its lower bound a = −β:
// with Z = a + t, the density ∝ exp(−t²/2 − a t) on t ≥ 0.
func truncMomentsQuad(beta float64) (lambda, v float64) {
	a := -beta
	upper := 40.0
	if a > 1 {
		upper = 60 / a
	}
	f := func(k int) float64 {
		return quad.Fixed(func(t float64) float64 {
			return math.Pow(t, float64(k)) * math.Exp(-0.5*t*t-a*t)
		}, 0, upper, 4000, nil, 0)
	}
	m0, m1, m2 := f(0), f(1), f(2)
	mt := m1 / m0
	vt := m2/m0 - mt*mt
	// Mean of Z is a + mt = −β + mt = β·0 + ... ; λ = E[Z] − 0 with Z ≥ −β
	// shifted: truncMoments describes Z ~ N(0,1) | Z ≥ −β, mean λ.
	return a + mt, vt
}

func TestTruncMomentsAgainstQuadrature(t *testing.T) {
	for _, beta := range []float64{6, 2, 0.5, 0, -1, -3, -4.99, -5.01, -6, -8, -12, -20, -40, -200} {
		lq, vq := truncMomentsQuad(beta)
		l, v := truncMoments(beta)
		if math.Abs(l-lq) > 1e-10*math.Max(1, math.Abs(lq)) {
			t.Errorf("β=%g: λ=%.16g, quadrature %.16g", beta, l, lq)
		}
		if math.Abs(v-vq) > 1e-9*vq {
			t.Errorf("β=%g: v=%.16g, quadrature %.16g (rel err %.2g)", beta, v, vq, math.Abs(v-vq)/vq)
		}
	}
}

func TestMillsContinuousAtCut(t *testing.T) {
	// Both branches must agree at the switch point to near machine precision.
	l1, v1 := truncMoments(-millsCut + 1e-12)
	l2, v2 := truncMoments(-millsCut - 1e-12)
	if math.Abs(l1-l2) > 1e-11 || math.Abs(v1-v2)/v1 > 1e-9 {
		t.Fatalf("branches disagree at cut: λ %g vs %g, v %g vs %g", l1, l2, v1, v2)
	}
}

// acq.LogPhi, which EP relies on, against the quadrature Mills ratio.
func TestLogPhiAgainstQuadrature(t *testing.T) {
	for _, x := range []float64{-100, -37, -20, -5.5, -5, -1, 0, 1, 5, 10, 40} {
		got := acq.LogPhi(x)
		// Reference: log Φ(x) = log φ(x) − log λ(x) for every x (λ = φ/Φ),
		// using the quadrature λ as an independent value.
		lq, _ := truncMomentsQuad(x)
		want := -0.5*x*x - logSqrt2Pi - math.Log(lq)
		if x >= 5 {
			want = math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
		}
		if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("logΦ(%g) = %.16g, want %.16g", x, got, want)
		}
	}
}

func TestSampleTruncNormalMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	for _, a := range []float64{-2, 0, 3, 4.9, 5.1, 9} {
		var s, s2 float64
		for i := 0; i < n; i++ {
			z := sampleTruncNormal(rng, a)
			if z < a {
				t.Fatalf("a=%g: sample %g below the bound", a, z)
			}
			s += z
			s2 += z * z
		}
		mean := s / n
		vr := s2/n - mean*mean
		lam, v := truncMoments(-a)
		se := math.Sqrt(v / n)
		if math.Abs(mean-lam) > 4*se {
			t.Errorf("a=%g: mean %g, want %g ± %g", a, mean, lam, 4*se)
		}
		// Var of the sample variance ≈ (μ4 − v²)/n; bound μ4 ≤ 9 v² (light tails).
		if math.Abs(vr-v) > 4*math.Sqrt(8*v*v/n) {
			t.Errorf("a=%g: var %g, want %g", a, vr, v)
		}
	}
}
