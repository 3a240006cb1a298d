package testfunc

import "math"

// ackley returns the negated Ackley function on [−32.768, 32.768]^d (d ≥ 1):
//
//	f(x) = 20·exp(−0.2·√(Σx_i²/d)) + exp(Σcos(2πx_i)/d) − 20 − e,
//
// with f* = 0 at x = 0. Its gradient is undefined at x = 0 (a cone tip);
// Grad returns the zero subgradient there.
func ackley(d int) (*Function, error) {
	if err := checkDim("ackley", d, 1); err != nil {
		return nil, err
	}
	n := float64(d)
	value := func(x, dst []float64) float64 {
		var sq, cs float64
		for _, v := range x {
			sq += v * v
			cs += math.Cos(2 * math.Pi * v)
		}
		r := math.Sqrt(sq / n)
		e1 := math.Exp(-0.2 * r)
		e2 := math.Exp(cs / n)
		for i := range dst {
			var d1 float64
			if r > 0 {
				d1 = 20 * e1 * (-0.2) * x[i] / (n * r)
			}
			dst[i] = d1 - e2*2*math.Pi*math.Sin(2*math.Pi*x[i])/n
		}
		// 20(e₁ − 1) + (e₂ − e) with expm1, so f(0) = 0 exactly.
		return 20*math.Expm1(-0.2*r) + math.E*math.Expm1(cs/n-1)
	}
	return &Function{
		Name:       "ackley",
		Dim:        d,
		Lower:      box(d, -32.768),
		Upper:      box(d, 32.768),
		Optimum:    0,
		Maximizers: [][]float64{box(d, 0)},
		NoiseVar:   defaultNoiseVar,
		f:          func(x []float64) float64 { return value(x, nil) },
		grad:       value,
	}, nil
}

// levy returns the negated Levy function on [−10, 10]^d (d ≥ 1): with
// w_i = 1 + (x_i − 1)/4,
//
//	f(x) = −[sin²(πw₁) + Σ_{i<d} (w_i − 1)²(1 + 10 sin²(πw_i + 1)) + (w_d − 1)²(1 + sin²(2πw_d))],
//
// with f* = 0 at x = (1, …, 1).
func levy(d int) (*Function, error) {
	if err := checkDim("levy", d, 1); err != nil {
		return nil, err
	}
	value := func(x, dst []float64) float64 {
		w := func(i int) float64 { return 1 + (x[i]-1)/4 }
		for i := range dst {
			dst[i] = 0
		}
		w1 := w(0)
		g := math.Pow(math.Sin(math.Pi*w1), 2)
		if dst != nil {
			dst[0] += math.Pi * math.Sin(2*math.Pi*w1)
		}
		for i := 0; i < d-1; i++ {
			wi := w(i)
			s := math.Sin(math.Pi*wi + 1)
			g += (wi - 1) * (wi - 1) * (1 + 10*s*s)
			if dst != nil {
				dst[i] += 2*(wi-1)*(1+10*s*s) + (wi-1)*(wi-1)*10*math.Pi*math.Sin(2*(math.Pi*wi+1))
			}
		}
		wd := w(d - 1)
		s := math.Sin(2 * math.Pi * wd)
		g += (wd - 1) * (wd - 1) * (1 + s*s)
		if dst != nil {
			dst[d-1] += 2*(wd-1)*(1+s*s) + (wd-1)*(wd-1)*2*math.Pi*math.Sin(4*math.Pi*wd)
			for i := range dst {
				dst[i] *= -0.25 // f = −g and dw/dx = 1/4
			}
		}
		return -g
	}
	return &Function{
		Name:       "levy",
		Dim:        d,
		Lower:      box(d, -10),
		Upper:      box(d, 10),
		Optimum:    0,
		Maximizers: [][]float64{box(d, 1)},
		NoiseVar:   defaultNoiseVar,
		f:          func(x []float64) float64 { return value(x, nil) },
		grad:       value,
	}, nil
}

// rosenbrock returns the negated Rosenbrock function on [−5, 10]^d (d ≥ 2):
//
//	f(x) = −Σ_{i<d} [100(x_{i+1} − x_i²)² + (x_i − 1)²],
//
// with f* = 0 at x = (1, …, 1).
func rosenbrock(d int) (*Function, error) {
	if err := checkDim("rosenbrock", d, 2); err != nil {
		return nil, err
	}
	value := func(x, dst []float64) float64 {
		for i := range dst {
			dst[i] = 0
		}
		var g float64
		for i := 0; i < d-1; i++ {
			a := x[i+1] - x[i]*x[i]
			b := x[i] - 1
			g += 100*a*a + b*b
			if dst != nil {
				dst[i] -= -400*x[i]*a + 2*b
				dst[i+1] -= 200 * a
			}
		}
		return -g
	}
	return &Function{
		Name:       "rosenbrock",
		Dim:        d,
		Lower:      box(d, -5),
		Upper:      box(d, 10),
		Optimum:    0,
		Maximizers: [][]float64{box(d, 1)},
		NoiseVar:   defaultNoiseVar,
		f:          func(x []float64) float64 { return value(x, nil) },
		grad:       value,
	}, nil
}

// sixHumpCamel returns the negated six-hump camel function on [−3,3]×[−2,2]:
//
//	f(x) = −[(4 − 2.1x₁² + x₁⁴/3)x₁² + x₁x₂ + (−4 + 4x₂²)x₂²],
//
// with f* = 1.0316284534898774 at ±(0.0898420131, −0.7126564033).
func sixHumpCamel() *Function {
	value := func(x, dst []float64) float64 {
		x1, x2 := x[0], x[1]
		x12 := x1 * x1
		x22 := x2 * x2
		if dst != nil {
			dst[0] = -(8*x1 - 8.4*x12*x1 + 2*x12*x12*x1 + x2)
			dst[1] = -(x1 - 8*x2 + 16*x22*x2)
		}
		return -((4-2.1*x12+x12*x12/3)*x12 + x1*x2 + (-4+4*x22)*x22)
	}
	return &Function{
		Name:    "sixhumpcamel",
		Dim:     2,
		Lower:   []float64{-3, -2},
		Upper:   []float64{3, 2},
		Optimum: camelOptimum,
		Maximizers: [][]float64{
			{camelMaximizer[0], camelMaximizer[1]},
			{-camelMaximizer[0], -camelMaximizer[1]},
		},
		NoiseVar: defaultNoiseVar,
		f:        func(x []float64) float64 { return value(x, nil) },
		grad:     value,
	}
}

// camelMaximizer is a root of the gradient (Newton-polished);
// TestMaximizersAreStationary checks it.
var (
	camelMaximizer = [2]float64{0.089842013100318072, -0.71265640302073963}
	camelOptimum   = 1.0316284534898774
)

// michalewiczM is the steepness m of the Michalewicz function.
const michalewiczM = 10

// michalewicz returns the negated Michalewicz function (m = 10) on [0, π]^d
// (d ≥ 1):
//
//	f(x) = Σ_{i=1}^d sin(x_i)·sin^{2m}(i·x_i²/π).
//
// It is separable, so its maximum is the sum of d one-dimensional maxima,
// each computed here to machine precision; f* = 1.8013034101 (d = 2),
// 4.6876581791 (d = 5), 9.6601517156 (d = 10), matching the published
// minima −1.8013, −4.687658, −9.66015.
func michalewicz(d int) (*Function, error) {
	if err := checkDim("michalewicz", d, 1); err != nil {
		return nil, err
	}
	xstar := make([]float64, d)
	var fstar float64
	for i := range xstar {
		xstar[i], _ = michalewiczArgmax(i + 1)
	}
	value := func(x, dst []float64) float64 {
		var f float64
		for i, v := range x {
			hi, di := michalewiczTerm(i+1, v)
			f += hi
			if dst != nil {
				dst[i] = di
			}
		}
		return f
	}
	// Sum in the same order Eval does so f(x*) reproduces f* bit for bit.
	fstar = value(xstar, nil)
	return &Function{
		Name:       "michalewicz",
		Dim:        d,
		Lower:      box(d, 0),
		Upper:      box(d, math.Pi),
		Optimum:    fstar,
		Maximizers: [][]float64{xstar},
		NoiseVar:   defaultNoiseVar,
		f:          func(x []float64) float64 { return value(x, nil) },
		grad:       value,
	}, nil
}

// michalewiczTerm returns h_i(x) = sin(x)·sin^{2m}(i x²/π) and its derivative.
func michalewiczTerm(i int, x float64) (float64, float64) {
	sx, cx := math.Sincos(x)
	phi := float64(i) * x * x / math.Pi
	sp, cp := math.Sincos(phi)
	p := math.Pow(sp, 2*michalewiczM-1) // odd power keeps the sign
	h := sx * p * sp
	dh := cx*p*sp + sx*2*michalewiczM*p*cp*2*float64(i)*x/math.Pi
	return h, dh
}

// michalewiczArgmax maximizes h_i on [0, π]. sin^{2m}(φ) peaks where
// φ = i x²/π = π/2 + kπ, so the maximum lies in one of the half periods
// φ ∈ [kπ, (k+1)π]; h_i is unimodal in each, and the peak value there is at
// most sin of the x range, so only the few half periods nearest x = π/2 can
// hold the maximum. Each candidate is maximized by golden-section search and
// polished by Newton steps on h_i'.
func michalewiczArgmax(i int) (float64, float64) {
	fi := float64(i)
	xOf := func(phi float64) float64 { return math.Min(math.Sqrt(phi*math.Pi/fi), math.Pi) }
	kmax := int(fi * math.Pi / math.Pi) // φ(π) = iπ
	bestX, bestH := 0.0, math.Inf(-1)
	for k := 0; k <= kmax; k++ {
		lo, hi := xOf(float64(k)*math.Pi), xOf(float64(k+1)*math.Pi)
		if hi <= lo {
			continue
		}
		// Upper bound of h on [lo, hi] is max sin over the interval.
		ub := math.Max(math.Sin(lo), math.Sin(hi))
		if lo <= math.Pi/2 && math.Pi/2 <= hi {
			ub = 1
		}
		if ub <= bestH {
			continue
		}
		x := goldenMax(func(x float64) float64 { h, _ := michalewiczTerm(i, x); return h }, lo, hi)
		x = newtonPolish(func(x float64) float64 { _, d := michalewiczTerm(i, x); return d }, x, lo, hi)
		if h, _ := michalewiczTerm(i, x); h > bestH {
			bestX, bestH = x, h
		}
	}
	return bestX, bestH
}

// goldenMax maximizes a unimodal f on [a, b] by golden-section search to
// the resolution of float64.
func goldenMax(f func(float64) float64, a, b float64) float64 {
	const r = 0.6180339887498949 // (√5 − 1)/2
	c, d := b-r*(b-a), a+r*(b-a)
	fc, fd := f(c), f(d)
	for it := 0; it < 200 && b-a > 1e-15*(1+math.Abs(a)); it++ {
		if fc >= fd {
			b, d, fd = d, c, fc
			c = b - r*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + r*(b-a)
			fd = f(d)
		}
	}
	return (a + b) / 2
}

// newtonPolish takes a few Newton steps on the derivative d of a 1-d function
// (its second derivative by central differences) to sharpen a maximizer that
// golden-section search located only to √ε; steps that leave [lo, hi] stop it.
func newtonPolish(d func(float64) float64, x, lo, hi float64) float64 {
	for it := 0; it < 4; it++ {
		h := 1e-6 * (1 + math.Abs(x))
		d2 := (d(x+h) - d(x-h)) / (2 * h)
		if !(d2 < 0) {
			break
		}
		nx := x - d(x)/d2
		if nx < lo || nx > hi || math.Abs(nx-x) > 1e-6 {
			break
		}
		x = nx
	}
	return x
}

// styblinskiTang returns the negated Styblinski–Tang function on [−5, 5]^d
// (d ≥ 1):
//
//	f(x) = −½ Σ (x_i⁴ − 16x_i² + 5x_i),
//
// with f* = 39.16616570377142·d at x_i = −2.903534027771178 (the smallest
// root of 4x³ − 32x + 5 = 0).
func styblinskiTang(d int) (*Function, error) {
	if err := checkDim("styblinskitang", d, 1); err != nil {
		return nil, err
	}
	value := func(x, dst []float64) float64 {
		var g float64
		for i, v := range x {
			v2 := v * v
			g += v2*v2 - 16*v2 + 5*v
			if dst != nil {
				dst[i] = -0.5 * (4*v2*v - 32*v + 5)
			}
		}
		return -0.5 * g
	}
	// Newton on the cubic 4x³ − 32x + 5 from the published −2.9035.
	r := -2.9035
	for it := 0; it < 50; it++ {
		r -= (4*r*r*r - 32*r + 5) / (12*r*r - 32)
	}
	xstar := box(d, r)
	return &Function{
		Name:       "styblinskitang",
		Dim:        d,
		Lower:      box(d, -5),
		Upper:      box(d, 5),
		Optimum:    value(xstar, nil),
		Maximizers: [][]float64{xstar},
		NoiseVar:   defaultNoiseVar,
		f:          func(x []float64) float64 { return value(x, nil) },
		grad:       value,
	}, nil
}
