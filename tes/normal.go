package tes

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mathext"

	"github.com/tesbo/tesbo/internal/linalg"
)

// Standard-normal helpers used by EP (Appendix D), the orthant probabilities
// (Appendix A) and importance sampling (Appendix B). φ, Φ and log Φ come from
// package acq and the shared Mills ratio from internal/linalg; what is here
// is what only TES needs: the truncated-normal moments with a cancellation-free
// variance factor, and truncated sampling.

const (
	logSqrt2Pi = 0.91893853320467274178 // log √(2π)

	// millsCut is where the continued fraction takes over from erfc: below
	// β = −5 the ratio φ(β)/Φ(β) computed as a quotient loses digits to
	// cancellation in 1 − λ(β+λ) (reading 5 of the package doc).
	millsCut = 5.0
)

// normSF returns 1 − Φ(x) = Φ(−x) without cancellation.
func normSF(x float64) float64 { return 0.5 * math.Erfc(x/math.Sqrt2) }

// truncMoments returns, for a standard normal Z truncated to Z ≥ −β (i.e. a
// Gaussian cavity N(μ, τ) truncated to x ≥ 0 with β = μ/√τ), the inverse
// Mills ratio λ = φ(β)/Φ(β) and the variance factor v = 1 − λ(β + λ), so
// that the truncated mean is μ + √τ λ and the truncated variance τ v
// (Appendix D's μ̂ and τ̂, obtained there by equating Eqs. (13)/(16) and
// (14)/(18)). For β < −5 both come from the continued fraction,
// because φ/Φ and 1 − λ(β+λ) cancel catastrophically there (reading 5 of the package doc).
// v is always in (0, 1].
func truncMoments(beta float64) (lambda, v float64) {
	if beta >= -millsCut {
		lambda = math.Exp(-0.5*beta*beta - logSqrt2Pi - linalg.LogPhi(beta))
		v = 1 - lambda*(beta+lambda)
		if v <= 0 { // cannot happen mathematically; guard rounding
			v = math.SmallestNonzeroFloat64
		}
		return lambda, v
	}
	u := -beta
	t, s := linalg.MillsTails(u)
	// λ = u + t; with u t = 1 − s t: v = 1 − (u+t) t = s t − t² = t (s − t).
	return u + t, t * (s - t)
}

// normQuantile returns Φ⁻¹(p) (Wichura's AS241 via gonum, accurate to full
// precision in the tails).
func normQuantile(p float64) float64 { return mathext.NormalQuantile(p) }

// sampleTruncNormal draws Z ~ N(0, 1) conditioned on Z ≥ a. Inverse-CDF on
// the upper tail for a < 5 (the tail mass Φ(−a) is computed without
// cancellation), Robert's (1995) exponential rejection sampler further out,
// where its acceptance rate exceeds 0.98.
func sampleTruncNormal(rng *rand.Rand, a float64) float64 {
	if a < millsCut {
		q := normSF(a)
		for {
			u := rng.Float64()
			if u == 0 {
				continue
			}
			// Z = −Φ⁻¹(u Φ(−a)) has the truncated law.
			z := -normQuantile(u * q)
			if z >= a && !math.IsInf(z, 0) {
				return z
			}
			if z < a { // rounding right at the boundary
				return a
			}
		}
	}
	lam := 0.5 * (a + math.Sqrt(a*a+4))
	for {
		z := a + rng.ExpFloat64()/lam
		d := z - lam
		if rng.Float64() <= math.Exp(-0.5*d*d) {
			return z
		}
	}
}

// logSumExp returns log Σ exp(x_i) without overflow; −Inf for an empty or
// all −Inf input.
func logSumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}
