package testfunc

import (
	"fmt"
	"math"
)

// This file holds BoTorch's constrained single-objective test problems
// (ConstrainedSyntheticTestFunction subclasses, negate=False): the
// objective is minimized and each output after it is a slack, feasible
// where ≥ 0. Where BoTorch states no optimum the constrained optimum of the
// literature is given when BoTorch's definition is the literature's; the two
// whose BoTorch variant departs from it (PressureVessel, WeldedBeam) have
// none.

// constrainedGramacy is Gramacy et al. (2016)'s toy on [0,1]²: minimize
// x₁ + x₂ subject to
//
//	c₁ = −(1.5 − x₁ − 2x₂ − 0.5 sin(2π(x₁² − 2x₂))) ≥ 0,  c₂ = 1.5 − x₁² − x₂² ≥ 0,
//
// with optimum ≈ 0.5998 at (0.1954, 0.4044) (BoTorch's, from the paper).
func constrainedGramacy() *Multi {
	return &Multi{
		Name: "constrainedgramacy", Dim: 2,
		Lower: box(2, 0), Upper: box(2, 1),
		Outputs:   withSlacks(2),
		MaxHV:     math.NaN(),
		Optimum:   0.5998,
		Minimizer: []float64{0.1954, 0.4044},
		f: func(x []float64) []float64 {
			x1, x2 := x[0], x[1]
			c1 := 1.5 - x1 - 2*x2 - 0.5*math.Sin(2*math.Pi*(x1*x1-2*x2))
			c2 := x1*x1 + x2*x2 - 1.5
			return []float64{x1 + x2, -c1, -c2}
		},
	}
}

// constrainedHartmann is Letham et al. (2019)'s Hartmann in d = 3 or 6
// dimensions on [0,1]^d: minimize −S(x) (see Hartmann3, Hartmann6) subject
// to 1 − ‖x‖₂ ≥ 0. For d = 6 Hartmann's own maximizer (norm 0.946) is
// feasible, so the optimum is −3.32236801141552; for d = 3 it is not (norm
// 1.024), and the optimum is −3.838521110865 at (0.042731, 0.537385,
// 0.842254) on the sphere (computed by multi-start SLSQP; TestConstrainedOptima
// checks the value there and that no feasible random point beats it).
func constrainedHartmann(d, _ int) (*Multi, error) {
	return hartmannInBall("constrainedhartmann", d, false)
}

// constrainedHartmannSmooth is BoTorch's smooth variant of
// constrainedHartmann: the same problem with the slack 1 − ‖x‖₂², so the
// same feasible set and optimum, but a slack without the norm's kink at 0.
func constrainedHartmannSmooth(d, _ int) (*Multi, error) {
	return hartmannInBall("constrainedhartmannsmooth", d, true)
}

// hartmannInBall builds constrainedHartmann (squared false) or
// constrainedHartmannSmooth (squared true) under the given name.
func hartmannInBall(name string, d int, squared bool) (*Multi, error) {
	var h *Function
	var opt float64
	var xs []float64
	switch d {
	case 3:
		h, opt, xs = Hartmann3(), -3.838521110865, []float64{0.042731, 0.537385, 0.842254}
	case 6:
		h, opt, xs = Hartmann6(), -hartmann6Optimum, hartmann6Maximizer[:]
	default:
		return nil, fmt.Errorf("%s: dimension %d, want 3 or 6", name, d)
	}
	return &Multi{
		Name: name, Dim: d,
		Lower: box(d, 0), Upper: box(d, 1),
		Outputs:   withSlacks(1),
		MaxHV:     math.NaN(),
		Optimum:   opt,
		Minimizer: xs,
		f: func(x []float64) []float64 {
			n := 0.0
			for _, v := range x {
				n += v * v
			}
			if squared {
				return []float64{-h.f(x), 1 - n}
			}
			return []float64{-h.f(x), 1 - math.Sqrt(n)}
		},
	}, nil
}

// roundNearest rounds v to the nearest multiple of step (half-way cases to
// even multiples, like torch.round) and clamps it into [lo, hi].
func roundNearest(v, step, lo, hi float64) float64 {
	return math.Min(math.Max(math.RoundToEven(v/step)*step, lo), hi)
}

// pressureVessel is the pressure vessel design (Coello Coello 2002) as
// BoTorch defines it on [0,10]²×[10,50]×[150,200]: minimize
//
//	0.6224 t_s R L + 1.7781 t_h R² + 3.1661 t_s² L + 19.84 t_s² R,
//
// with the thicknesses t_s, t_h (x₁, x₂) rounded to multiples of 0.0625 in
// the objective only, subject to x₁ − 0.0193x₃ ≥ 0, x₂ − 0.00954x₃ ≥ 0,
// πx₃²x₄ + (4/3)πx₃³ − 1296000 ≥ 0 and 240 − x₄ ≥ 0. The literature's
// optimum 6059.714 assumes the rounding in the constraints too; this
// variant's optimum is unknown (BoTorch states none).
func pressureVessel() *Multi {
	opt, xs := unknownOptimum()
	return &Multi{
		Name: "pressurevessel", Dim: 4,
		Lower: []float64{0, 0, 10, 150}, Upper: []float64{10, 10, 50, 200},
		Outputs: withSlacks(4), MaxHV: math.NaN(), Optimum: opt, Minimizer: xs,
		f: func(x []float64) []float64 {
			x1, x2, x3, x4 := x[0], x[1], x[2], x[3]
			r1, r2 := roundNearest(x1, 0.0625, 0, 10), roundNearest(x2, 0.0625, 0, 10)
			f := 0.6224*r1*x3*x4 + 1.7781*r2*x3*x3 + 3.1661*r1*r1*x4 + 19.84*r1*r1*x3
			return []float64{f,
				x1 - 0.0193*x3,
				x2 - 0.00954*x3,
				math.Pi*x3*x3*x4 + 4.0/3*math.Pi*x3*x3*x3 - 1296000,
				240 - x4,
			}
		},
	}
}

// weldedBeam is the single-objective welded beam design (Coello Coello
// 2002) as BoTorch's WeldedBeamSO defines it on [0.125,10]×[0.1,10]³:
// minimize 1.10471x₁²x₂ + 0.04811x₃x₄(14 + x₂) subject to six slacks (shear
// stress ≤ 13600, bending stress ≤ 30000, x₁ ≤ x₄, a cost bound, deflection
// ≤ 0.25 and the buckling load P_c ≥ 6000). BoTorch's buckling load carries
// a factor 6 where the literature divides by 6 (P_c = 4.013E x₃x₄³·6/L² ·
// (1 − x₃√(E/G)/(4L))), which relaxes that constraint, so the literature's
// optimum 1.724852 does not apply and none is known.
func weldedBeam() *Multi {
	opt, xs := unknownOptimum()
	return &Multi{
		Name: "weldedbeam", Dim: 4,
		Lower: []float64{0.125, 0.1, 0.1, 0.1}, Upper: box(4, 10),
		Outputs: withSlacks(6), MaxHV: math.NaN(), Optimum: opt, Minimizer: xs,
		f: func(x []float64) []float64 {
			x1, x2, x3, x4 := x[0], x[1], x[2], x[3]
			const P, L, E, G = 6000.0, 14.0, 30e6, 12e6
			M := P * (L + x2/2)
			R := math.Sqrt(0.25 * (x2*x2 + (x1+x3)*(x1+x3)))
			J := 2 * math.Sqrt2 * x1 * x2 * (x2*x2/12 + 0.25*(x1+x3)*(x1+x3))
			Pc := 4.013 * E * x3 * x4 * x4 * x4 * 6 / (L * L) * (1 - 0.25*x3*math.Sqrt(E/G)/L)
			t1 := P / (math.Sqrt2 * x1 * x2)
			t2 := M * R / J
			t := math.Sqrt(t1*t1 + t1*t2*x2/R + t2*t2)
			s := 6 * P * L / (x4 * x3 * x3)
			dl := 4 * P * L * L * L / (E * x3 * x3 * x3 * x4)
			f := 1.10471*x1*x1*x2 + 0.04811*x3*x4*(14+x2)
			return []float64{f,
				13600 - t,
				30000 - s,
				x4 - x1,
				5 - (0.10471*x1*x1 + 0.04811*x3*x4*(14+x2)),
				0.25 - dl,
				Pc - P,
			}
		},
	}
}

// tensionCompressionString is the spring design (Hedar & Fukushima 2006)
// on [0.01,1]²×[0.01,20]: minimize x₁²x₂(x₃ + 2) (wire diameter x₁, coil
// diameter x₂, active coils x₃) subject to four slacks (each BoTorch's
// negated constraint g_i ≤ 0, with g_i clamped at 100 first), optimum
// 0.0126652 at (0.051690, 0.356750, 11.287126) (Hedar & Fukushima's).
func tensionCompressionString() *Multi {
	return &Multi{
		Name: "tensioncompressionstring", Dim: 3,
		Lower: []float64{0.01, 0.01, 0.01}, Upper: []float64{1, 1, 20},
		Outputs: withSlacks(4), MaxHV: math.NaN(),
		Optimum: 0.0126652, Minimizer: []float64{0.051690, 0.356750, 11.287126},
		f: func(x []float64) []float64 {
			x1, x2, x3 := x[0], x[1], x[2]
			g := []float64{
				1 - x2*x2*x2*x3/(71785*math.Pow(x1, 4)),
				(4*x2*x2-x1*x2)/(12566*x1*x1*x1*(x2-x1)) + 1/(5108*x1*x1) - 1,
				1 - 140.45*x1/(x3*x2*x2),
				(x1+x2)/1.5 - 1,
			}
			out := []float64{x1 * x1 * x2 * (x3 + 2)}
			for _, v := range g {
				out = append(out, -math.Min(v, 100))
			}
			return out
		},
	}
}

// speedReducer is the speed reducer design (Lemonge et al. 2010) on
// BoTorch's box [2.6,3.6]×[0.7,0.8]×[17,28]×[7.3,8.3]×[7.8,8.3]×[2.9,3.9]×
// [5,5.5]: minimize the gearbox weight subject to eleven slacks; with
// x₅ ≥ 7.8 its optimum is 2996.3482 at (3.5, 0.7, 17, 7.3, 7.8, 3.350215,
// 5.286683) (the literature's value for these bounds).
func speedReducer() *Multi {
	return &Multi{
		Name: "speedreducer", Dim: 7,
		Lower:   []float64{2.6, 0.7, 17, 7.3, 7.8, 2.9, 5},
		Upper:   []float64{3.6, 0.8, 28, 8.3, 8.3, 3.9, 5.5},
		Outputs: withSlacks(11), MaxHV: math.NaN(),
		Optimum: 2996.3482, Minimizer: []float64{3.5, 0.7, 17, 7.3, 7.8, 3.350215, 5.286683},
		f: func(x []float64) []float64 {
			x1, x2, x3, x4, x5, x6, x7 := x[0], x[1], x[2], x[3], x[4], x[5], x[6]
			f := 0.7854*x1*x2*x2*(3.3333*x3*x3+14.9334*x3-43.0934) - 1.508*x1*(x6*x6+x7*x7) +
				7.4777*(x6*x6*x6+x7*x7*x7) + 0.7854*(x4*x6*x6+x5*x7*x7)
			g := []float64{
				27/(x1*x2*x2*x3) - 1,
				397.5/(x1*x2*x2*x3*x3) - 1,
				1.93*x4*x4*x4/(x2*x3*math.Pow(x6, 4)) - 1,
				1.93*x5*x5*x5/(x2*x3*math.Pow(x7, 4)) - 1,
				math.Sqrt(math.Pow(745*x4/(x2*x3), 2)+16.9e6)/(0.1*x6*x6*x6) - 1100,
				math.Sqrt(math.Pow(745*x5/(x2*x3), 2)+157.5e6)/(0.1*x7*x7*x7) - 850,
				x2*x3 - 40,
				5 - x1/x2,
				x1/x2 - 12,
				(1.5*x6+1.9)/x4 - 1,
				(1.1*x7+1.9)/x5 - 1,
			}
			out := []float64{f}
			for _, v := range g {
				out = append(out, -v)
			}
			return out
		},
	}
}
