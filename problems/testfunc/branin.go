package testfunc

import "math"

// Branin–Hoo constants: g(x) = a(x₂ − b x₁² + c x₁ − r)² + s(1 − t)cos x₁ + s.
const (
	braninA = 1.0
	braninB = 5.1 / (4 * math.Pi * math.Pi)
	braninC = 5 / math.Pi
	braninR = 6.0
	braninS = 10.0
	braninT = 1 / (8 * math.Pi)
)

// Branin returns the negated Branin–Hoo function on the unit square [0,1]²:
//
//	f(u) = −g(15u₁ − 5, 15u₂),
//
// where g is the classic Branin function on [−5,10]×[0,15] (the rescaling the
// paper's Appendix H and BoTorch benchmarks use). It has three global
// maximizers, at x = (−π, 12.275), (π, 2.275), (3π, 2.475) in the classic
// units, and f* = −s·t = −5/(4π) ≈ −0.397887.
func Branin() *Function {
	unit := func(x1, x2 float64) []float64 { return []float64{(x1 + 5) / 15, x2 / 15} }
	return &Function{
		Name:     "branin",
		Dim:      2,
		Lower:    []float64{0, 0},
		Upper:    []float64{1, 1},
		Optimum:  -braninS * braninT,
		NoiseVar: defaultNoiseVar,
		Maximizers: [][]float64{
			unit(-math.Pi, 12.275),
			unit(math.Pi, 2.275),
			unit(3*math.Pi, 2.475),
		},
		f: func(u []float64) float64 {
			x1, x2 := 15*u[0]-5, 15*u[1]
			h := x2 - braninB*x1*x1 + braninC*x1 - braninR
			return -(braninA*h*h + braninS*(1-braninT)*math.Cos(x1) + braninS)
		},
		grad: func(u, dst []float64) float64 {
			x1, x2 := 15*u[0]-5, 15*u[1]
			h := x2 - braninB*x1*x1 + braninC*x1 - braninR
			s, c := math.Sincos(x1)
			dg1 := 2*braninA*h*(-2*braninB*x1+braninC) - braninS*(1-braninT)*s
			dg2 := 2 * braninA * h
			dst[0], dst[1] = -15*dg1, -15*dg2
			return -(braninA*h*h + braninS*(1-braninT)*c + braninS)
		},
	}
}
