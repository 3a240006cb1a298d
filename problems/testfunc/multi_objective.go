package testfunc

import (
	"fmt"
	"math"
)

// This file holds BoTorch's multi-objective test problems (negate=False,
// i.e. every objective minimized) with their reference points and maximum
// hypervolumes as BoTorch states them.

// braninCurrin is the two-objective problem on [0,1]² pairing the Branin
// function on the rescaled square, g(15x₁ − 5, 15x₂) (see Branin), with
// Currin's exponential function
//
//	c(x) = (1 − exp(−1/(2x₂))) · (2300x₁³ + 1900x₁² + 2092x₁ + 60) /
//	       (100x₁³ + 500x₁² + 4x₁ + 20),
//
// both minimized; reference point (18, 6) and maximum hypervolume
// 59.36011874867746 (BoTorch's NSGA-II estimate). At x₂ = 0 Currin's first
// factor is its limit 1.
func braninCurrin() *Multi {
	br := Branin()
	return &Multi{
		Name: "branincurrin", Dim: 2,
		Lower: []float64{0, 0}, Upper: []float64{1, 1},
		Outputs:  objectives(2),
		RefPoint: []float64{18, 6},
		MaxHV:    59.36011874867746,
		Optimum:  math.NaN(),
		f: func(x []float64) []float64 {
			b := -br.f(x)
			x1, x2 := x[0], x[1]
			first := 1.0
			if x2 > 0 {
				first = 1 - math.Exp(-1/(2*x2))
			}
			num := 2300*x1*x1*x1 + 1900*x1*x1 + 2092*x1 + 60
			den := 100*x1*x1*x1 + 500*x1*x1 + 4*x1 + 20
			return []float64{b, first * num / den}
		},
	}
}

// dtlz2 is DTLZ2 (Deb et al. 2005) with d inputs in [0,1] and M
// objectives: with g = Σ_{i≥M} (x_i − 0.5)² over the last k = d − M + 1
// coordinates and θ_i = x_i π/2,
//
//	f_j = (1 + g) · Π_{i<M−1−j} cos θ_i · (sin θ_{M−1−j} if j > 0),  j = 0 … M−1,
//
// all minimized. The Pareto front is the positive part of the unit sphere
// (g = 0); reference point 1.1 in every objective, so the maximum
// hypervolume is 1.1^M minus the volume of the positive orthant of the
// unit ball, π^{M/2} / Γ(M/2 + 1) / 2^M.
func dtlz2(d, m int) (*Multi, error) {
	if m < 2 || m > maxObjectives || d <= m {
		return nil, fmt.Errorf("dtlz2: %d inputs and %d objectives; want 2 ≤ objectives ≤ %d and inputs > objectives", d, m, maxObjectives)
	}
	ref := make([]float64, m)
	for i := range ref {
		ref[i] = 1.1
	}
	ball := math.Pow(math.Pi, float64(m)/2) / math.Gamma(float64(m)/2+1) / math.Pow(2, float64(m))
	return &Multi{
		Name: "dtlz2", Dim: d,
		Lower: box(d, 0), Upper: box(d, 1),
		Outputs:  objectives(m),
		RefPoint: ref,
		MaxHV:    math.Pow(1.1, float64(m)) - ball,
		Optimum:  math.NaN(),
		f: func(x []float64) []float64 {
			g := 0.0
			for _, v := range x[m-1:] {
				g += (v - 0.5) * (v - 0.5)
			}
			out := make([]float64, m)
			for j := range out {
				idx := m - 1 - j
				v := 1 + g
				for _, xi := range x[:idx] {
					v *= math.Cos(xi * math.Pi / 2)
				}
				if j > 0 {
					v *= math.Sin(x[idx] * math.Pi / 2)
				}
				out[j] = v
			}
			return out
		},
	}, nil
}

// zdt returns ZDT1, ZDT2 or ZDT3 (Zitzler, Deb & Thiele 2000) on [0,1]^d
// (d ≥ 2), two minimized objectives with g = 1 + 9·mean(x₂ … x_d):
//
//	f₁ = x₁,  f₂ = g·h(x₁/g),
//	ZDT1: h(r) = 1 − √r;  ZDT2: h(r) = 1 − r²;  ZDT3: h(r) = 1 − √r − r sin(10π x₁),
//
// reference point (11, 11) and maximum hypervolumes 120 + 2/3, 120 + 1/3
// and 128.77811613069076 (the front is g = 1).
func zdt(variant int) func(d, m int) (*Multi, error) {
	maxHV := map[int]float64{1: 120 + 2.0/3, 2: 120 + 1.0/3, 3: 128.77811613069076}[variant]
	return func(d, _ int) (*Multi, error) {
		name := fmt.Sprintf("zdt%d", variant)
		if d < 2 {
			return nil, fmt.Errorf("%s: %d inputs, want at least 2", name, d)
		}
		return &Multi{
			Name: name, Dim: d,
			Lower: box(d, 0), Upper: box(d, 1),
			Outputs:  objectives(2),
			RefPoint: []float64{11, 11},
			MaxHV:    maxHV,
			Optimum:  math.NaN(),
			f: func(x []float64) []float64 {
				s := 0.0
				for _, v := range x[1:] {
					s += v
				}
				g := 1 + 9*s/float64(d-1)
				r := x[0] / g
				var h float64
				switch variant {
				case 1:
					h = 1 - math.Sqrt(r)
				case 2:
					h = 1 - r*r
				default:
					h = 1 - math.Sqrt(r) - r*math.Sin(10*math.Pi*x[0])
				}
				return []float64{x[0], g * h}
			},
		}, nil
	}
}

// vehicleSafety is the vehicle crash-worthiness problem (Tanabe & Ishibuchi
// 2020's RE3-5-4) on [1,3]⁵: three minimized response surfaces (mass,
// acceleration, toe-board intrusion), reference point (1864.72022,
// 11.81993945, 0.2903999384) and maximum hypervolume 246.81607081187002
// (BoTorch's, from Tanabe's approximate front).
func vehicleSafety() *Multi {
	return &Multi{
		Name: "vehiclesafety", Dim: 5,
		Lower: box(5, 1), Upper: box(5, 3),
		Outputs:  objectives(3),
		RefPoint: []float64{1864.72022, 11.81993945, 0.2903999384},
		MaxHV:    246.81607081187002,
		Optimum:  math.NaN(),
		f: func(x []float64) []float64 {
			x1, x2, x3, x4, x5 := x[0], x[1], x[2], x[3], x[4]
			f1 := 1640.2823 + 2.3573285*x1 + 2.3220035*x2 + 4.5688768*x3 + 7.7213633*x4 + 4.4559504*x5
			f2 := 6.5856 + 1.15*x1 - 1.0427*x2 + 0.9738*x3 + 0.8364*x4 - 0.3695*x1*x4 + 0.0861*x1*x5 +
				0.3628*x2*x4 - 0.1106*x1*x1 - 0.3437*x3*x3 + 0.1764*x4*x4
			f3 := -0.0551 + 0.0181*x1 + 0.1024*x2 + 0.0421*x3 - 0.0073*x1*x2 + 0.024*x2*x3 -
				0.0118*x2*x4 - 0.0204*x3*x4 - 0.008*x3*x5 - 0.0241*x2*x2 + 0.0109*x4*x4
			return []float64{f1, f2, f3}
		},
	}
}
