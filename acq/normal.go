package acq

import (
	"math"

	"github.com/tesbo/tesbo/internal/linalg"
)

// Gaussian helpers, stable far into the tails. PES's EP updates use
// invMills (for β below about −5 the inverse Mills ratio must not be
// computed as φ/Φ, which loses every digit there); package tes uses LogPhi.

const (
	sqrt2     = math.Sqrt2
	invSqrt2  = 1 / math.Sqrt2
	logSqrt2π = 0.91893853320467274178032973640562 // log √(2π)
)

// normPDF returns the standard normal density φ(z) = exp(−z²/2)/√(2π).
func normPDF(z float64) float64 { return math.Exp(-0.5*z*z - logSqrt2π) }

// NormCDF returns the standard normal distribution function
// Φ(z) = erfc(−z/√2)/2, accurate in relative terms for z < 0 down to the
// underflow of Φ (z ≈ −38.5).
func NormCDF(z float64) float64 { return 0.5 * math.Erfc(-z*invSqrt2) }

// erfcx returns the scaled complementary error function
// erfcx(x) = exp(x²)·erfc(x), which for large x behaves like 1/(x√π) and so
// neither underflows nor loses relative accuracy where erfc(x) does. For
// x < −26.7 the result overflows to +Inf. For x ≥ 2 it is computed from
// the Mills ratio's continued fraction.
func erfcx(x float64) float64 { return linalg.Erfcx(x) }

// LogPhi returns log Φ(z), the log standard normal distribution function,
// accurate for all z: for z < 0 it uses Φ(z) = erfcx(−z/√2)·exp(−z²/2)/2,
// so log Φ(z) ≈ −z²/2 − log(−z√(2π)) far in the lower tail instead of
// log(0) = −Inf; for z > 0 it uses log1p(−Φ(−z)).
func LogPhi(z float64) float64 { return linalg.LogPhi(z) }

// invMills returns the inverse Mills ratio λ(z) = φ(z)/Φ(z), which is
// d log Φ(z)/dz. For z < 0 it is computed as √(2/π)/erfcx(−z/√2), which
// stays accurate in the lower tail where φ and Φ both underflow
// (λ(z) ≈ −z for z → −∞).
func invMills(z float64) float64 { return linalg.InvMills(z) }

// logH returns log h(z) and its derivative d log h/dz = Φ(z)/h(z), where
//
//	h(z) = φ(z) + z·Φ(z)
//
// is the expected improvement of a standard normal over the threshold −z:
// EI(x) = σ(x)·h((μ(x) − y_best)/σ(x)). For z ≥ −3 it is computed
// directly. Below, h(z) = φ(z)·(1 − t·m(t)) with t = −z and the Mills ratio
// m(t) = Φ(−t)/φ(t) = 1/(t + K), K = 1/(t + 2/(t + 3/(t + …))), so that
// 1 − t·m(t) = K/(t + K) without cancellation, and d log h/dz = 1/K. This
// keeps log-EI finite and accurate (≈ −z²/2 − log√(2π) − 2 log|z| as
// z → −∞) where h underflows, the stabilisation Ament et al. (2023,
// "Unexpected improvements to expected improvement") argue for, done here by
// a continued fraction rather than their erfcx/log1mexp formulation.
func logH(z float64) (logh, dlogh float64) {
	switch {
	case math.IsNaN(z):
		return z, z
	case math.IsInf(z, 1):
		return z, 0
	case math.IsInf(z, -1):
		return z, math.Inf(1)
	case z >= -3:
		phi, Phi := normPDF(z), NormCDF(z)
		h := phi + z*Phi
		return math.Log(h), Phi / h
	}
	t := -z
	// K = 1/(t + 2/(t + 3/(t + …))), the first tail of the Mills ratio's
	// continued fraction.
	K, _ := linalg.MillsTails(t)
	return -0.5*z*z - logSqrt2π + math.Log(K/(t+K)), 1 / K
}

// logEI returns log EI(x) = log σ + log h((μ − best)/σ) for a Gaussian
// predictive N(μ, σ²) and incumbent best (maximization), with
// ∂/∂μ and ∂/∂σ of it. For σ = 0 it returns log max(μ − best, 0) and
// zero derivatives.
func logEI(mu, sigma, best float64) (v, dmu, dsigma float64) {
	if !(sigma > 0) {
		imp := mu - best
		if imp > 0 {
			return math.Log(imp), 1 / imp, 0
		}
		return math.Inf(-1), 0, 0
	}
	z := (mu - best) / sigma
	lh, dlh := logH(z)
	// ∂z/∂μ = 1/σ, ∂z/∂σ = −z/σ.
	return math.Log(sigma) + lh, dlh / sigma, (1 - z*dlh) / sigma
}
