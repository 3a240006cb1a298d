package acq

import "math"

// Gaussian helpers, stable far into the tails. Package tes uses LogPhi and
// InvMills for its EP updates (for β below about −5 the inverse Mills ratio
// must not be computed as φ/Φ, which loses every digit there).

const (
	sqrt2     = math.Sqrt2
	invSqrt2  = 1 / math.Sqrt2
	invSqrtPi = 0.56418958354775628694807945156077 // 1/√π
	logSqrt2π = 0.91893853320467274178032973640562 // log √(2π)
	sqrt2OvPi = 0.79788456080286535587989211986876 // √(2/π)
)

// NormPDF returns the standard normal density φ(z) = exp(−z²/2)/√(2π).
func NormPDF(z float64) float64 { return math.Exp(-0.5*z*z - logSqrt2π) }

// NormCDF returns the standard normal distribution function
// Φ(z) = erfc(−z/√2)/2, accurate in relative terms for z < 0 down to the
// underflow of Φ (z ≈ −38.5).
func NormCDF(z float64) float64 { return 0.5 * math.Erfc(-z*invSqrt2) }

// Erfcx returns the scaled complementary error function
// erfcx(x) = exp(x²)·erfc(x), which for large x behaves like 1/(x√π) and so
// neither underflows nor loses relative accuracy where erfc(x) does. For
// x < −26.7 the result overflows to +Inf.
func Erfcx(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x < 0:
		// erfcx(x) = 2 exp(x²) − erfcx(−x).
		if x < -26.7 {
			return math.Inf(1)
		}
		return 2*math.Exp(x*x) - Erfcx(-x)
	case x < 2:
		return math.Exp(x*x) * math.Erfc(x)
	case math.IsInf(x, 1):
		return 0
	}
	// Continued fraction (Abramowitz & Stegun 7.1.14, Laplace):
	// erfcx(x) = (1/√π) · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + …))))),
	// evaluated with the modified Lentz algorithm. It converges quickly for
	// x ≥ 2 and avoids the overflow of exp(x²).
	return invSqrtPi / cfLentz(x, 0.5)
}

// cfLentz evaluates b + a₁/(b + a₂/(b + a₃/(b + …))) with a_k = k·step by the
// modified Lentz algorithm (all partial denominators equal b > 0).
func cfLentz(b, step float64) float64 {
	const (
		tiny = 1e-300
		eps  = 1e-16
	)
	f := b
	C, D := f, 0.0
	for k := 1; k <= 5000; k++ {
		a := float64(k) * step
		D = b + a*D
		if D == 0 {
			D = tiny
		}
		C = b + a/C
		if C == 0 {
			C = tiny
		}
		D = 1 / D
		delta := C * D
		f *= delta
		if math.Abs(delta-1) < eps {
			break
		}
	}
	return f
}

// LogPhi returns log Φ(z), the log standard normal distribution function,
// accurate for all z: for z < 0 it uses Φ(z) = erfcx(−z/√2)·exp(−z²/2)/2,
// so log Φ(z) ≈ −z²/2 − log(−z√(2π)) far in the lower tail instead of
// log(0) = −Inf; for z > 0 it uses log1p(−Φ(−z)).
func LogPhi(z float64) float64 {
	switch {
	case math.IsNaN(z):
		return z
	case z > 0:
		return math.Log1p(-0.5 * math.Erfc(z*invSqrt2))
	case math.IsInf(z, -1):
		return z
	}
	return math.Log(0.5*Erfcx(-z*invSqrt2)) - 0.5*z*z
}

// InvMills returns the inverse Mills ratio λ(z) = φ(z)/Φ(z), which is
// d log Φ(z)/dz. For z < 0 it is computed as √(2/π)/erfcx(−z/√2), which
// stays accurate in the lower tail where φ and Φ both underflow
// (λ(z) ≈ −z for z → −∞).
func InvMills(z float64) float64 {
	switch {
	case math.IsNaN(z):
		return z
	case z >= 0:
		return NormPDF(z) / NormCDF(z)
	case math.IsInf(z, -1):
		return math.Inf(1)
	}
	return sqrt2OvPi / Erfcx(-z*invSqrt2)
}

// LogH returns log h(z) and its derivative d log h/dz = Φ(z)/h(z), where
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
func LogH(z float64) (logh, dlogh float64) {
	switch {
	case math.IsNaN(z):
		return z, z
	case math.IsInf(z, 1):
		return z, 0
	case math.IsInf(z, -1):
		return z, math.Inf(1)
	case z >= -3:
		phi, Phi := NormPDF(z), NormCDF(z)
		h := phi + z*Phi
		return math.Log(h), Phi / h
	}
	t := -z
	// K = 1/(t + 2/(t + 3/(t + …))) = 1/cf with cf = t + 2/(t + 3/(…)).
	K := 1 / cfLentzFrom(t, 2)
	return -0.5*z*z - logSqrt2π + math.Log(K/(t+K)), 1 / K
}

// cfLentzFrom evaluates b + a₀/(b + (a₀+1)/(b + (a₀+2)/(b + …))) by the
// modified Lentz algorithm (b > 0, a₀ > 0).
func cfLentzFrom(b, a0 float64) float64 {
	const (
		tiny = 1e-300
		eps  = 1e-16
	)
	f := b
	C, D := f, 0.0
	for k := 0; k < 5000; k++ {
		a := a0 + float64(k)
		D = b + a*D
		if D == 0 {
			D = tiny
		}
		C = b + a/C
		if C == 0 {
			C = tiny
		}
		D = 1 / D
		delta := C * D
		f *= delta
		if math.Abs(delta-1) < eps {
			break
		}
	}
	return f
}

// LogEI returns log EI(x) = log σ + log h((μ − best)/σ) for a Gaussian
// predictive N(μ, σ²) and incumbent best (maximization), with
// ∂/∂μ and ∂/∂σ of it. For σ = 0 it returns log max(μ − best, 0) and
// zero derivatives.
func LogEI(mu, sigma, best float64) (v, dmu, dsigma float64) {
	if !(sigma > 0) {
		imp := mu - best
		if imp > 0 {
			return math.Log(imp), 1 / imp, 0
		}
		return math.Inf(-1), 0, 0
	}
	z := (mu - best) / sigma
	lh, dlh := LogH(z)
	// ∂z/∂μ = 1/σ, ∂z/∂σ = −z/σ.
	return math.Log(sigma) + lh, dlh / sigma, (1 - z*dlh) / sigma
}
