package testfunc

import "math"

// This file holds BoTorch's two-dimensional synthetic test functions that
// the classics lack: Beale, Bukin N.6, Drop-Wave, Eggholder, Hölder table and
// the three-hump camel. Definitions, bounds and optima are BoTorch's
// (botorch.test_functions.synthetic), written here from the formulas; every
// one is negated into maximization form.

// beale returns the negated Beale function on [−4.5, 4.5]²:
//
//	f(x) = −[(1.5 − x₁ + x₁x₂)² + (2.25 − x₁ + x₁x₂²)² + (2.625 − x₁ + x₁x₂³)²],
//
// with f* = 0 at (3, 0.5).
func beale() *Function {
	value := func(x, dst []float64) float64 {
		x1, x2 := x[0], x[1]
		y2, y3 := x2*x2, x2*x2*x2
		t1 := 1.5 - x1 + x1*x2
		t2 := 2.25 - x1 + x1*y2
		t3 := 2.625 - x1 + x1*y3
		if dst != nil {
			dst[0] = -2 * (t1*(x2-1) + t2*(y2-1) + t3*(y3-1))
			dst[1] = -2 * (t1*x1 + t2*2*x1*x2 + t3*3*x1*y2)
		}
		return -(t1*t1 + t2*t2 + t3*t3)
	}
	return smooth("beale", box(2, -4.5), box(2, 4.5), 0, [][]float64{{3, 0.5}}, value)
}

// bukin returns the negated Bukin N.6 function on [−15, −5] × [−3, 3]:
//
//	f(x) = −[100·√|x₂ − 0.01x₁²| + 0.01·|x₁ + 10|],
//
// with f* = 0 at (−10, 1). It is not differentiable along its ridge
// x₂ = 0.01x₁², where the maximum lies, so it has no gradient.
func bukin() *Function {
	return &Function{
		Name:       "bukin",
		Dim:        2,
		Lower:      []float64{-15, -3},
		Upper:      []float64{-5, 3},
		Optimum:    0,
		Maximizers: [][]float64{{-10, 1}},
		NoiseVar:   defaultNoiseVar,
		f: func(x []float64) float64 {
			return -(100*math.Sqrt(math.Abs(x[1]-0.01*x[0]*x[0])) + 0.01*math.Abs(x[0]+10))
		},
	}
}

// dropWave returns the negated Drop-Wave function on [−5.12, 5.12]²: with
// r = ‖x‖,
//
//	f(x) = (1 + cos 12r) / (r²/2 + 2),
//
// with f* = 1 at x = 0.
func dropWave() *Function {
	value := func(x, dst []float64) float64 {
		r2 := x[0]*x[0] + x[1]*x[1]
		r := math.Sqrt(r2)
		s, c := math.Sincos(12 * r)
		num, den := 1+c, 0.5*r2+2
		if dst != nil {
			// d(1 + cos 12r)/dx_j = −12 sin(12r)·x_j/r, whose limit at r = 0
			// is −144·x_j = 0.
			k := 144.0
			if r > 0 {
				k = 12 * s / r
			}
			for j := range dst {
				dst[j] = (-k*x[j]*den - num*x[j]) / (den * den)
			}
		}
		return num / den
	}
	return smooth("dropwave", box(2, -5.12), box(2, 5.12), 1, [][]float64{{0, 0}}, value)
}

// eggHolder returns the negated Eggholder function on [−512, 512]²:
//
//	f(x) = (x₂ + 47)·sin√|x₂ + x₁/2 + 47| + x₁·sin√|x₁ − x₂ − 47|,
//
// whose maximum lies on the bound x₁ = 512: f* = 959.6406627208509 at
// (512, 404.2318051137578), computed here (BoTorch quotes 959.6407 at
// (512, 404.2319)). Its gradient is infinite where either root's argument
// vanishes; Grad returns the finite part there.
func eggHolder() *Function {
	value := func(x, dst []float64) float64 {
		x1, x2 := x[0], x[1]
		a, b := x2+x1/2+47, x1-x2-47
		ra, rb := math.Sqrt(math.Abs(a)), math.Sqrt(math.Abs(b))
		sa, ca := math.Sincos(ra)
		sb, cb := math.Sincos(rb)
		if dst != nil {
			// d sin√|a| / da = cos√|a| · sign(a) / (2√|a|).
			var da, db float64
			if ra > 0 {
				da = ca * math.Copysign(1, a) / (2 * ra)
			}
			if rb > 0 {
				db = cb * math.Copysign(1, b) / (2 * rb)
			}
			dst[0] = (x2+47)*da/2 + sb + x1*db
			dst[1] = sa + (x2+47)*da - x1*db
		}
		return (x2+47)*sa + x1*sb
	}
	// Maximize over x₂ on the bound x₁ = 512, where ∂f/∂x₁ > 0.
	g := make([]float64, 2)
	x2 := goldenMax(func(t float64) float64 { return value([]float64{512, t}, nil) }, 400, 408)
	x2 = newtonPolish(func(t float64) float64 { value([]float64{512, t}, g); return g[1] }, x2, 400, 408)
	xstar := []float64{512, x2}
	return smooth("eggholder", box(2, -512), box(2, 512), value(xstar, nil), [][]float64{xstar}, value)
}

// holderTable returns the negated Hölder table function on [−10, 10]²:
//
//	f(x) = |sin x₁ · cos x₂ · exp|1 − ‖x‖/π||,
//
// with four maximizers (±8.0550234, ±9.6645900) by symmetry and
// f* = 19.208502567886743, computed here (BoTorch quotes 19.2085 at
// (±8.05502, ±9.66459)). Its gradient is undefined where the product
// vanishes and at ‖x‖ = π; Grad returns one side's there.
func holderTable() *Function {
	value := func(x, dst []float64) float64 {
		x1, x2 := x[0], x[1]
		r := math.Hypot(x1, x2)
		s1, c1 := math.Sincos(x1)
		s2, c2 := math.Sincos(x2)
		u := 1 - r/math.Pi
		e := math.Exp(math.Abs(u))
		p := s1 * c2 * e
		if dst != nil {
			// ∂e/∂x_j = e · sign(u) · (−x_j/(πr)).
			var k float64
			if r > 0 {
				k = -math.Copysign(1, u) / (math.Pi * r)
			}
			sg := math.Copysign(1, p)
			dst[0] = sg * (c1*c2*e + p*k*x1)
			dst[1] = sg * (-s1*s2*e + p*k*x2)
		}
		return math.Abs(p)
	}
	xs := polishStationary(value, []float64{8.05502, 9.66459})
	a, b := xs[0], xs[1]
	maximizers := [][]float64{{a, b}, {-a, -b}, {-a, b}, {a, -b}}
	return smooth("holdertable", box(2, -10), box(2, 10), value(xs, nil), maximizers, value)
}

// threeHumpCamel returns the negated three-hump camel function on [−5, 5]²:
//
//	f(x) = −[2x₁² − 1.05x₁⁴ + x₁⁶/6 + x₁x₂ + x₂²],
//
// with f* = 0 at x = 0.
func threeHumpCamel() *Function {
	value := func(x, dst []float64) float64 {
		x1, x2 := x[0], x[1]
		y := x1 * x1
		if dst != nil {
			dst[0] = -(4*x1 - 4.2*y*x1 + y*y*x1 + x2)
			dst[1] = -(x1 + 2*x2)
		}
		return -(2*y - 1.05*y*y + y*y*y/6 + x1*x2 + x2*x2)
	}
	return smooth("threehumpcamel", box(2, -5), box(2, 5), 0, [][]float64{{0, 0}}, value)
}
