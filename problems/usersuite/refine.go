package usersuite

import (
	"math"

	"gonum.org/v1/gonum/optimize"
)

// refined sets p.Best and p.Opt to the optimum of p.F found by Nelder–Mead
// from x0 (native units, Float parameters only), for problems such as sums
// of overlapping bumps whose maximizer has no closed form. Points outside
// the box score as infinitely bad. It panics if the search fails: the
// suite's definitions are fixed, so that is a programming error.
func refined(p *Problem, x0 []float64) *Problem {
	sign := -1.0 // Minimize −F
	if p.Minimize {
		sign = 1
	}
	f := func(x []float64) float64 {
		for i, v := range x {
			if v < p.Params[i].Low || v > p.Params[i].High {
				return math.Inf(1)
			}
		}
		return sign * p.F(x)
	}
	settings := &optimize.Settings{
		MajorIterations: 20000,
		Converger:       &optimize.FunctionConverge{Absolute: 1e-15, Iterations: 200},
	}
	res, err := optimize.Minimize(optimize.Problem{Func: f}, append([]float64(nil), x0...), settings, &optimize.NelderMead{})
	if err != nil && res == nil {
		panic("usersuite: refine " + p.Name + ": " + err.Error())
	}
	p.Best = res.X
	p.Opt = p.F(res.X)
	return p
}
