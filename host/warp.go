package host

import "math"

// yeoJohnson is the Yeo–Johnson power transform (Yeo & Johnson 2000,
// Biometrika 87) with parameter λ:
//
//	ψ(x) = ((x+1)^λ − 1)/λ            x ≥ 0, λ ≠ 0   (log(x+1) at λ = 0)
//	ψ(x) = −((1−x)^(2−λ) − 1)/(2−λ)   x < 0, λ ≠ 2   (−log(1−x) at λ = 2)
//
// It is monotone increasing for every λ, the identity at λ = 1; λ < 1
// compresses a long upper tail, λ > 1 a long lower tail.
func yeoJohnson(x, lam float64) float64 {
	if x >= 0 {
		if math.Abs(lam) < 1e-10 {
			return math.Log1p(x)
		}
		return (math.Pow(x+1, lam) - 1) / lam
	}
	if math.Abs(lam-2) < 1e-10 {
		return -math.Log1p(-x)
	}
	return -(math.Pow(1-x, 2-lam) - 1) / (2 - lam)
}

// yeoJohnsonInverse inverts yeoJohnson. Values outside the transform's
// range (possible for λ < 0 or λ > 2 when z comes from a model rather than
// a transformed observation) have no preimage and map to ±Inf, the edge
// of the native range (dataset.native bounds them, see bounds).
func yeoJohnsonInverse(z, lam float64) float64 {
	if z >= 0 {
		if math.Abs(lam) < 1e-10 {
			return math.Expm1(z)
		}
		b := lam*z + 1
		if b <= 0 {
			return math.Inf(1)
		}
		return math.Pow(b, 1/lam) - 1
	}
	if math.Abs(lam-2) < 1e-10 {
		return -math.Expm1(-z)
	}
	b := 1 - (2-lam)*z
	if b <= 0 {
		return math.Inf(-1)
	}
	return 1 - math.Pow(b, 1/(2-lam))
}

// yeoJohnsonLogLik is the profile log-likelihood of λ for data x under
// ψ_λ(x) ~ N(m, s²) with m and s² at their maxima:
//
//	ℓ(λ) = −n/2 · log ŝ²(λ) + (λ − 1) Σ sign(x_i) log(|x_i| + 1).
func yeoJohnsonLogLik(x []float64, lam float64) float64 {
	n := float64(len(x))
	var m, jac float64
	z := make([]float64, len(x))
	for i, v := range x {
		z[i] = yeoJohnson(v, lam)
		m += z[i]
		jac += math.Copysign(math.Log1p(math.Abs(v)), v)
	}
	m /= n
	var ss float64
	for _, v := range z {
		ss += (v - m) * (v - m)
	}
	if !(ss > 0) || math.IsInf(ss, 0) {
		return math.Inf(-1)
	}
	return -n/2*math.Log(ss/n) + (lam-1)*jac
}

// fitYeoJohnson returns the λ in [lo, 4] that maximizes yeoJohnsonLogLik
// on x (golden-section search: ℓ is unimodal in λ in practice), exactly lo when the
// maximum lies at or below it.
func fitYeoJohnson(x []float64, lo float64) float64 {
	start, hi := lo, 4.0
	const g = 0.6180339887498949
	a, b := hi-g*(hi-lo), lo+g*(hi-lo)
	fa, fb := yeoJohnsonLogLik(x, a), yeoJohnsonLogLik(x, b)
	for hi-lo > 1e-4 {
		if fa < fb {
			lo, a, fa = a, b, fb
			b = lo + g*(hi-lo)
			fb = yeoJohnsonLogLik(x, b)
		} else {
			hi, b, fb = b, a, fa
			a = hi - g*(hi-lo)
			fa = yeoJohnsonLogLik(x, a)
		}
	}
	if lo == start {
		return start
	}
	return (lo + hi) / 2
}
