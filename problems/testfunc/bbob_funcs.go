package testfunc

import (
	"math"
)

// bbobDef builds one BBOB function for an instance: core(x) is f(x) − f_opt
// (≥ 0, and 0 exactly at xstar), xstar its global minimizer.
type bbobDef func(b *bbobInstance) (core func(x []float64) float64, xstar []float64)

// bbobDefs are f1 … f24 of COCO's noiseless definitions. In each, z is the
// transformed input and indices run from 0, so COCO's (i−1)/(D−1) is
// i/(d−1) here.
var bbobDefs = [BBOBFunctions]bbobDef{
	bbobSphere, bbobEllipsoidSep, bbobRastriginSep, bbobBucheRastrigin,
	bbobLinearSlope, bbobAttractiveSector, bbobStepEllipsoid, bbobRosenbrock,
	bbobRosenbrockRotated, bbobEllipsoid, bbobDiscus, bbobBentCigar,
	bbobSharpRidge, bbobDifferentPowers, bbobRastrigin, bbobWeierstrass,
	bbobSchaffers(10), bbobSchaffers(1000), bbobGriewankRosenbrock,
	bbobSchwefel, bbobGallagher(101), bbobGallagher(21), bbobKatsuura,
	bbobLunacek,
}

// f1: ‖z‖², z = x − x_opt.
func bbobSphere(b *bbobInstance) (func([]float64) float64, []float64) {
	return func(x []float64) float64 {
		z := shifted(x, b.xopt)
		var s float64
		for _, v := range z {
			s += v * v
		}
		return s
	}, b.xopt
}

// weightedSquares returns Σ w_i z_i².
func weightedSquares(w, z []float64) float64 {
	var s float64
	for i, v := range z {
		s += w[i] * v * v
	}
	return s
}

// f2: Σ 10^{6i/(d−1)} z_i², z = T_osz(x − x_opt).
func bbobEllipsoidSep(b *bbobInstance) (func([]float64) float64, []float64) {
	w := condWeights(10, 6, b.d)
	return func(x []float64) float64 {
		return weightedSquares(w, toszAll(shifted(x, b.xopt)))
	}, b.xopt
}

// f3: Rastrigin of z = Λ^10 T_asy^0.2(T_osz(x − x_opt)).
func bbobRastriginSep(b *bbobInstance) (func([]float64) float64, []float64) {
	l := lambda(10, b.d)
	return func(x []float64) float64 {
		return rastriginSum(scale(l, tasy(0.2, toszAll(shifted(x, b.xopt)))))
	}, b.xopt
}

// f4: Rastrigin of z_i = s_i T_osz(x_i − x_opt_i) + 100 f_pen(x), where
// s_i = 10^{½i/(d−1)}, times 10 for the positive z_i of even index (COCO's
// odd 1-based index); those x_opt coordinates are made positive, as COCO.
func bbobBucheRastrigin(b *bbobInstance) (func([]float64) float64, []float64) {
	xopt := append([]float64(nil), b.xopt...)
	for i := 0; i < b.d; i += 2 {
		xopt[i] = math.Abs(xopt[i])
	}
	s := lambda(10, b.d)
	return func(x []float64) float64 {
		z := toszAll(shifted(x, xopt))
		for i := range z {
			z[i] *= s[i]
			if z[i] > 0 && i%2 == 0 {
				z[i] *= 10
			}
		}
		return rastriginSum(z) + 100*fpen(x)
	}, xopt
}

// f5: Σ 5|s_i| − s_i z_i with s_i = sign(x_opt_i)·10^{i/(d−1)}, x_opt ∈
// {±5}^d a random corner, and z_i = x_i where x_opt_i x_i < 25, else x_opt_i.
func bbobLinearSlope(b *bbobInstance) (func([]float64) float64, []float64) {
	xopt := make([]float64, b.d)
	for i, v := range b.xopt {
		xopt[i] = math.Copysign(5, v)
	}
	s := condWeights(10, 1, b.d)
	for i := range s {
		s[i] = math.Copysign(s[i], xopt[i])
	}
	return func(x []float64) float64 {
		var f float64
		for i, v := range x {
			z := v
			if xopt[i]*v >= 25 {
				z = xopt[i]
			}
			f += 5*math.Abs(s[i]) - s[i]*z
		}
		return f
	}, xopt
}

// f6: T_osz(Σ (s_i z_i)²)^0.9, z = QΛ^10R(x − x_opt), s_i = 100 where
// z_i·x_opt_i > 0, else 1.
func bbobAttractiveSector(b *bbobInstance) (func([]float64) float64, []float64) {
	r, q, l := b.rotation(streamR), b.rotation(streamQ), lambda(10, b.d)
	return func(x []float64) float64 {
		z := matVec(q, scale(l, matVec(r, shifted(x, b.xopt))))
		var s float64
		for i, v := range z {
			if v*b.xopt[i] > 0 {
				v *= 100
			}
			s += v * v
		}
		return math.Pow(tosz(s), 0.9)
	}, b.xopt
}

// f7: 0.1·max(|ẑ₁|/10⁴, Σ 10^{2i/(d−1)} z_i²) + f_pen(x), with
// ẑ = Λ^10R(x − x_opt), z̃ its rounding (to integers where |ẑ_i| > 0.5,
// to tenths otherwise) and z = Qz̃.
func bbobStepEllipsoid(b *bbobInstance) (func([]float64) float64, []float64) {
	r, q, l := b.rotation(streamR), b.rotation(streamQ), lambda(10, b.d)
	w := condWeights(10, 2, b.d)
	return func(x []float64) float64 {
		zh := scale(l, matVec(r, shifted(x, b.xopt)))
		zt := make([]float64, b.d)
		for i, v := range zh {
			if math.Abs(v) > 0.5 {
				zt[i] = math.Floor(0.5 + v)
			} else {
				zt[i] = math.Floor(0.5+10*v) / 10
			}
		}
		return 0.1*math.Max(math.Abs(zh[0])/1e4, weightedSquares(w, matVec(q, zt))) + fpen(x)
	}, b.xopt
}

// rosenbrockSum returns Σ_{i<d−1} 100(z_i² − z_{i+1})² + (z_i − 1)².
func rosenbrockSum(z []float64) float64 {
	var s float64
	for i := 0; i+1 < len(z); i++ {
		a, c := z[i]*z[i]-z[i+1], z[i]-1
		s += 100*a*a + c*c
	}
	return s
}

// rosenbrockScale is max(1, √d/8).
func rosenbrockScale(d int) float64 { return math.Max(1, math.Sqrt(float64(d))/8) }

// f8: Rosenbrock of z = max(1, √d/8)(x − x_opt) + 1, x_opt = ¾ of the
// instance's draw (so in [−3, 3]^d, as COCO).
func bbobRosenbrock(b *bbobInstance) (func([]float64) float64, []float64) {
	xopt := make([]float64, b.d)
	for i, v := range b.xopt {
		xopt[i] = 0.75 * v
	}
	c := rosenbrockScale(b.d)
	return func(x []float64) float64 {
		z := shifted(x, xopt)
		for i := range z {
			z[i] = c*z[i] + 1
		}
		return rosenbrockSum(z)
	}, xopt
}

// rotatedRosenbrockOpt is where z = cRx + ½ equals 1: x = Rᵀ(1/(2c)).
func rotatedRosenbrockOpt(r [][]float64, c float64) []float64 {
	return matTVec(r, box(len(r), 0.5/c))
}

// f9: Rosenbrock of z = max(1, √d/8)Rx + ½ (no x_opt shift: the minimizer
// is Rᵀ1/(2 max(1, √d/8))).
func bbobRosenbrockRotated(b *bbobInstance) (func([]float64) float64, []float64) {
	r, c := b.rotation(streamR), rosenbrockScale(b.d)
	return func(x []float64) float64 {
		z := matVec(r, x)
		for i := range z {
			z[i] = c*z[i] + 0.5
		}
		return rosenbrockSum(z)
	}, rotatedRosenbrockOpt(r, c)
}

// f10: Σ 10^{6i/(d−1)} z_i², z = T_osz(R(x − x_opt)).
func bbobEllipsoid(b *bbobInstance) (func([]float64) float64, []float64) {
	r, w := b.rotation(streamR), condWeights(10, 6, b.d)
	return func(x []float64) float64 {
		return weightedSquares(w, toszAll(matVec(r, shifted(x, b.xopt))))
	}, b.xopt
}

// f11: 10⁶z₁² + Σ_{i>1} z_i², z = T_osz(R(x − x_opt)).
func bbobDiscus(b *bbobInstance) (func([]float64) float64, []float64) {
	r := b.rotation(streamR)
	return func(x []float64) float64 {
		z := toszAll(matVec(r, shifted(x, b.xopt)))
		return 1e6*z[0]*z[0] + weightedSquares(box(b.d, 1)[1:], z[1:])
	}, b.xopt
}

// f12: z₁² + 10⁶Σ_{i>1} z_i², z = R T_asy^0.5(R(x − x_opt)).
func bbobBentCigar(b *bbobInstance) (func([]float64) float64, []float64) {
	r := b.rotation(streamR)
	return func(x []float64) float64 {
		z := matVec(r, tasy(0.5, matVec(r, shifted(x, b.xopt))))
		return z[0]*z[0] + 1e6*weightedSquares(box(b.d, 1)[1:], z[1:])
	}, b.xopt
}

// f13: z₁² + 100√(Σ_{i>1} z_i²), z = QΛ^10R(x − x_opt).
func bbobSharpRidge(b *bbobInstance) (func([]float64) float64, []float64) {
	r, q, l := b.rotation(streamR), b.rotation(streamQ), lambda(10, b.d)
	return func(x []float64) float64 {
		z := matVec(q, scale(l, matVec(r, shifted(x, b.xopt))))
		return z[0]*z[0] + 100*math.Sqrt(weightedSquares(box(b.d, 1)[1:], z[1:]))
	}, b.xopt
}

// f14: √(Σ |z_i|^{2 + 4i/(d−1)}), z = R(x − x_opt).
func bbobDifferentPowers(b *bbobInstance) (func([]float64) float64, []float64) {
	r := b.rotation(streamR)
	return func(x []float64) float64 {
		z := matVec(r, shifted(x, b.xopt))
		var s float64
		for i, v := range z {
			s += math.Pow(math.Abs(v), 2+4*float64(i)/float64(b.d-1))
		}
		return math.Sqrt(s)
	}, b.xopt
}

// f15: Rastrigin of z = RΛ^10Q T_asy^0.2(T_osz(R(x − x_opt))).
func bbobRastrigin(b *bbobInstance) (func([]float64) float64, []float64) {
	r, q, l := b.rotation(streamR), b.rotation(streamQ), lambda(10, b.d)
	return func(x []float64) float64 {
		z := tasy(0.2, toszAll(matVec(r, shifted(x, b.xopt))))
		return rastriginSum(matVec(r, scale(l, matVec(q, z))))
	}, b.xopt
}

// weierstrassTerm is Σ_{k=0}^{11} ½^k cos(2π3^k(z + ½)).
func weierstrassTerm(z float64) float64 {
	var s float64
	a, p := 1.0, 1.0
	for k := 0; k < 12; k++ {
		s += a * math.Cos(2*math.Pi*p*(z+0.5))
		a /= 2
		p *= 3
	}
	return s
}

// f16: 10((1/d)Σ_i w(z_i) − f₀)³ + (10/d) f_pen(x), w the Weierstrass term,
// f₀ = w(0), z = RΛ^{1/100}Q T_osz(R(x − x_opt)). The mean is taken as
// Σ (w(z_i) − f₀)/d, exactly 0 at z = 0.
func bbobWeierstrass(b *bbobInstance) (func([]float64) float64, []float64) {
	r, q, l := b.rotation(streamR), b.rotation(streamQ), lambda(0.01, b.d)
	f0 := weierstrassTerm(0)
	n := float64(b.d)
	return func(x []float64) float64 {
		z := matVec(r, scale(l, matVec(q, toszAll(matVec(r, shifted(x, b.xopt))))))
		var s float64
		for _, v := range z {
			s += weierstrassTerm(v) - f0
		}
		m := s / n
		return 10*m*m*m + 10/n*fpen(x)
	}, b.xopt
}

// f17 (α = 10) and f18 (α = 1000): ((1/(d−1))Σ_{i<d−1} √s_i + √s_i sin²(50 s_i^{1/5}))²
// + 10 f_pen(x), s_i = √(z_i² + z_{i+1}²), z = Λ^αQ T_asy^0.5(R(x − x_opt)).
func bbobSchaffers(alpha float64) bbobDef {
	return func(b *bbobInstance) (func([]float64) float64, []float64) {
		r, q, l := b.rotation(streamR), b.rotation(streamQ), lambda(alpha, b.d)
		return func(x []float64) float64 {
			z := scale(l, matVec(q, tasy(0.5, matVec(r, shifted(x, b.xopt)))))
			var m float64
			for i := 0; i+1 < b.d; i++ {
				s := math.Hypot(z[i], z[i+1])
				rs := math.Sqrt(s)
				sn := math.Sin(50 * math.Pow(s, 0.2))
				m += rs + rs*sn*sn
			}
			m /= float64(b.d - 1)
			return m*m + 10*fpen(x)
		}, b.xopt
	}
}

// f19: (10/(d−1))Σ_{i<d−1} (s_i/4000 − cos s_i) + 10, s_i the Rosenbrock
// terms 100(z_i² − z_{i+1})² + (z_i − 1)² of z = max(1, √d/8)Rx + ½; summed
// as Σ (s_i/4000 + 1 − cos s_i), exactly 0 at s = 0.
func bbobGriewankRosenbrock(b *bbobInstance) (func([]float64) float64, []float64) {
	r, c := b.rotation(streamR), rosenbrockScale(b.d)
	return func(x []float64) float64 {
		z := matVec(r, x)
		for i := range z {
			z[i] = c*z[i] + 0.5
		}
		var f float64
		for i := 0; i+1 < b.d; i++ {
			a, e := z[i]*z[i]-z[i+1], z[i]-1
			s := 100*a*a + e*e
			f += s/4000 + (1 - math.Cos(s))
		}
		return 10 / float64(b.d-1) * f
	}, rotatedRosenbrockOpt(r, c)
}

// schwefelT is the maximizer t* ≈ 420.9687 of t·sin√t on [400, 440].
var schwefelT = func() float64 {
	h := func(t float64) float64 { return t * math.Sin(math.Sqrt(t)) }
	dh := func(t float64) float64 { s, c := math.Sincos(math.Sqrt(t)); return s + math.Sqrt(t)*c/2 }
	return newtonPolish(dh, goldenMax(h, 400, 440), 400, 440)
}()

// f20: (1/d)Σ (c − z_i sin√|z_i|/100) + 100 f_pen(z/100), with x̂ = 2·1±⊗x,
// ẑ₁ = x̂₁, ẑ_{i+1} = x̂_{i+1} + ¼(x̂_i − 2|x_opt_i|),
// z = 100(Λ^10(ẑ − 2|x_opt|) + 2|x_opt|), x_opt = t*/200·1± and
// c = t*·sin√t*/100 (COCO's 4.189828872724339 to its digits), so z_i = t* and
// every term vanishes at x_opt.
func bbobSchwefel(b *bbobInstance) (func([]float64) float64, []float64) {
	sg := b.signs(b.rng(streamExtra))
	half := schwefelT / 200
	xopt := make([]float64, b.d)
	for i := range xopt {
		xopt[i] = half * sg[i]
	}
	two := 2 * half // 2|x_opt_i|
	zc := 100 * two
	c := zc * math.Sin(math.Sqrt(zc)) / 100
	l := lambda(10, b.d)
	n := float64(b.d)
	return func(x []float64) float64 {
		xh := make([]float64, b.d)
		for i, v := range x {
			xh[i] = 2 * sg[i] * v
		}
		z := make([]float64, b.d)
		z[0] = xh[0]
		for i := 1; i < b.d; i++ {
			z[i] = xh[i] + 0.25*(xh[i-1]-two)
		}
		var s float64
		zp := make([]float64, b.d)
		for i := range z {
			z[i] = 100 * (l[i]*(z[i]-two) + two)
			zp[i] = z[i] / 100
			s += c - z[i]*math.Sin(math.Sqrt(math.Abs(z[i])))/100
		}
		return s/n + 100*fpen(zp)
	}, xopt
}

// f21 (101 peaks) and f22 (21 peaks): T_osz(10 − max_i w_i exp(−(1/(2d))
// (x − y_i)ᵀRᵀC_iR(x − y_i)))² + f_pen(x). Peak 0 has w = 10 and is the
// optimum y₀ (uniform in [−4, 4]^d for f21, [−3.92, 3.92]^d for f22); the
// others have w_i = 1.1 + 8(i−1)/(n−2) < 10 and centres uniform in [−5, 5]^d
// (f21) or [−4.9, 4.9]^d (f22). C_i = Λ^{α_i}/α_i^{1/4} with its diagonal
// randomly permuted; α₀ = 1000 (f21) or 1000² (f22) and the other α_i a
// random permutation of 1000^{2j/(n−2)}, j = 0 … n−2.
func bbobGallagher(peaks int) bbobDef {
	return func(b *bbobInstance) (func([]float64) float64, []float64) {
		rng := b.rng(streamExtra)
		r := b.rotation(streamR)
		d := b.d
		alpha0, inner, outer := 1000.0, 5.0, 4.0
		if peaks == 21 {
			alpha0, inner, outer = 1e6, 4.9, 3.92
		}
		perm := rng.Perm(peaks - 1)
		w := make([]float64, peaks)
		ry := make([][]float64, peaks) // R·y_i
		c := make([][]float64, peaks)  // diagonal of C_i
		var y0 []float64
		for i := 0; i < peaks; i++ {
			alpha, half := alpha0, outer
			w[i] = 10
			if i > 0 {
				alpha = math.Pow(1000, 2*float64(perm[i-1])/float64(peaks-2))
				half = inner
				w[i] = 1.1 + 8*float64(i-1)/float64(peaks-2)
			}
			y := make([]float64, d)
			for j := range y {
				y[j] = half * (2*rng.Float64() - 1)
			}
			if i == 0 {
				y0 = y
			}
			ry[i] = matVec(r, y)
			l := lambda(alpha, d)
			c[i] = make([]float64, d)
			for j, p := range rng.Perm(d) {
				c[i][j] = l[p] / math.Pow(alpha, 0.25)
			}
		}
		return func(x []float64) float64 {
			rx := matVec(r, x)
			best := 0.0
			for i := range w {
				var q float64
				for j, v := range rx {
					e := v - ry[i][j]
					q += c[i][j] * e * e
				}
				best = math.Max(best, w[i]*math.Exp(-q/(2*float64(d))))
			}
			t := tosz(10 - best)
			return t*t + fpen(x)
		}, y0
	}
}

// katsuuraTerm is Σ_{j=1}^{32} |2^j z − round(2^j z)|/2^j.
func katsuuraTerm(z float64) float64 {
	var s float64
	p := 1.0
	for j := 1; j <= 32; j++ {
		p *= 2
		v := p * z
		s += math.Abs(v-math.RoundToEven(v)) / p
	}
	return s
}

// f23: (10/d²)Π_i (1 + (i+1)·katsuura(z_i))^{10/d^{1.2}} − 10/d² + f_pen(x),
// z = QΛ^100R(x − x_opt).
func bbobKatsuura(b *bbobInstance) (func([]float64) float64, []float64) {
	r, q, l := b.rotation(streamR), b.rotation(streamQ), lambda(100, b.d)
	n := float64(b.d)
	e := 10 / math.Pow(n, 1.2)
	return func(x []float64) float64 {
		z := matVec(q, scale(l, matVec(r, shifted(x, b.xopt))))
		p := 1.0
		for i, v := range z {
			p *= math.Pow(1+float64(i+1)*katsuuraTerm(v), e)
		}
		return 10/(n*n)*(p-1) + fpen(x)
	}, b.xopt
}

// f24: min(Σ(x̂_i − μ₀)², d + sΣ(x̂_i − μ₁)²) + 10(d − Σ cos 2πz_i) + 10⁴f_pen(x),
// with μ₀ = 2.5, s = 1 − 1/(2√(d+20) − 8.2), μ₁ = −√((μ₀² − 1)/s),
// x̂ = 2 sign(x_opt)⊗x, x_opt = (μ₀/2)·1± and z = QΛ^100R(x̂ − μ₀).
func bbobLunacek(b *bbobInstance) (func([]float64) float64, []float64) {
	const mu0 = 2.5
	n := float64(b.d)
	s := 1 - 1/(2*math.Sqrt(n+20)-8.2)
	mu1 := -math.Sqrt((mu0*mu0 - 1) / s)
	sg := b.signs(b.rng(streamExtra))
	xopt := make([]float64, b.d)
	for i := range xopt {
		xopt[i] = mu0 / 2 * sg[i]
	}
	r, q, l := b.rotation(streamR), b.rotation(streamQ), lambda(100, b.d)
	return func(x []float64) float64 {
		xh := make([]float64, b.d)
		var s0, s1 float64
		for i, v := range x {
			xh[i] = 2 * sg[i] * v
			s0 += (xh[i] - mu0) * (xh[i] - mu0)
			s1 += (xh[i] - mu1) * (xh[i] - mu1)
			xh[i] -= mu0
		}
		z := matVec(q, scale(l, matVec(r, xh)))
		var rs float64
		for _, v := range z {
			rs += 10 * (1 - math.Cos(2*math.Pi*v))
		}
		return math.Min(s0, n+s*s1) + rs + 1e4*fpen(x)
	}, xopt
}
