package acq

import (
	"context"
	"math"
)

// lbfgsb minimizes p over the box [0,1]^n starting from x, which it
// overwrites with the solution, and returns the final value.
//
// The method is projected L-BFGS with an active set, in the spirit of
// L-BFGS-B (Byrd, Lu, Nocedal & Zhu 1995) but without its generalized Cauchy
// point: at each iterate the variables held at a bound by the gradient
// (x_i = 0 with ∂_i > 0, or x_i = 1 with ∂_i < 0) are fixed, the two-loop
// recursion gives a quasi-Newton direction in the free variables, and a
// backtracking line search along the projected path P(x + t·dir) accepts the
// first step satisfying the Armijo condition
//
//	F(P(x + t·dir)) ≤ F(x) + c₁·∇F(x)ᵀ(P(x + t·dir) − x).
//
// A direction that is not a descent direction resets the memory to steepest
// descent. Correction pairs (s, y) enter the memory only when sᵀy > 0 (with a
// relative margin) so the implicit inverse Hessian stays positive definite.
// The search stops when the projected gradient |P(x − ∇F) − x|_∞ falls below
// GradTol, when an iteration decreases F by less than FuncTol·max(|F|, 1),
// when the line search fails from steepest descent, or after MaxIter
// iterations.
func lbfgsb(ctx context.Context, p *problem, x []float64, s OptimizeSettings) float64 {
	const (
		c1      = 1e-4
		maxLS   = 40
		boundEp = 0 // variables are exactly at a bound after projection
	)
	n := len(x)
	clipUnit(x)
	g := make([]float64, n)
	fx := p.valueGrad(x, g)
	if math.IsInf(fx, 0) {
		return fx
	}
	m := s.Memory
	S := make([][]float64, 0, m)
	Y := make([][]float64, 0, m)
	rho := make([]float64, 0, m)
	alpha := make([]float64, m)
	dir := make([]float64, n)
	free := make([]bool, n)
	xn := make([]float64, n)
	gn := make([]float64, n)

	for iter := 0; iter < s.MaxIter; iter++ {
		if ctx.Err() != nil {
			break
		}
		// Projected-gradient test and active set.
		pg := 0.0
		for i := range x {
			free[i] = !(x[i] <= boundEp && g[i] > 0) && !(x[i] >= 1-boundEp && g[i] < 0)
			step := math.Min(math.Max(x[i]-g[i], 0), 1) - x[i]
			pg = math.Max(pg, math.Abs(step))
		}
		if pg < s.GradTol {
			break
		}

		// Two-loop recursion on the free variables.
		for i := range dir {
			if free[i] {
				dir[i] = -g[i]
			} else {
				dir[i] = 0
			}
		}
		k := len(S)
		for j := k - 1; j >= 0; j-- {
			alpha[j] = rho[j] * dotFree(S[j], dir, free)
			axpyFree(-alpha[j], Y[j], dir, free)
		}
		if k > 0 {
			gamma := dotFree(S[k-1], Y[k-1], free) / dotFree(Y[k-1], Y[k-1], free)
			if !(gamma > 0) || math.IsInf(gamma, 0) {
				gamma = 1
			}
			for i := range dir {
				dir[i] *= gamma
			}
		}
		for j := 0; j < k; j++ {
			beta := rho[j] * dotFree(Y[j], dir, free)
			axpyFree(alpha[j]-beta, S[j], dir, free)
		}
		gd := dotFree(g, dir, free)
		if !(gd < 0) {
			// Not a descent direction on the free set: restart from
			// steepest descent.
			S, Y, rho = S[:0], Y[:0], rho[:0]
			k = 0
			gd = 0
			for i := range dir {
				if free[i] {
					dir[i] = -g[i]
					gd -= g[i] * g[i]
				} else {
					dir[i] = 0
				}
			}
			if gd == 0 {
				break
			}
		}

		// First step length: 1 for quasi-Newton directions; for steepest
		// descent, a step moving no coordinate by more than 0.2 of the box.
		t := 1.0
		if k == 0 {
			dmax := 0.0
			for _, v := range dir {
				dmax = math.Max(dmax, math.Abs(v))
			}
			t = math.Min(1, 0.2/dmax)
		}

		// Projected backtracking line search.
		accepted := false
		var fn float64
		for ls := 0; ls < maxLS; ls++ {
			decrease := 0.0
			moved := false
			for i := range x {
				v := x[i] + t*dir[i]
				v = math.Min(math.Max(v, 0), 1)
				xn[i] = v
				if v != x[i] {
					moved = true
				}
				decrease += g[i] * (v - x[i])
			}
			if !moved {
				break
			}
			fn = p.valueGrad(xn, gn)
			if !math.IsInf(fn, 0) && fn <= fx+c1*decrease {
				accepted = true
				break
			}
			t *= 0.5
		}
		if !accepted {
			if k == 0 {
				break // failed even along steepest descent
			}
			S, Y, rho = S[:0], Y[:0], rho[:0]
			continue
		}

		// Update the memory with the new pair.
		var sv, yv []float64
		if len(S) == m {
			sv, yv = S[0], Y[0]
			copy(S, S[1:])
			copy(Y, Y[1:])
			copy(rho, rho[1:])
			S, Y, rho = S[:m-1], Y[:m-1], rho[:m-1]
		} else {
			sv, yv = make([]float64, n), make([]float64, n)
		}
		sy, yy := 0.0, 0.0
		for i := range x {
			sv[i] = xn[i] - x[i]
			yv[i] = gn[i] - g[i]
			sy += sv[i] * yv[i]
			yy += yv[i] * yv[i]
		}
		if sy > 1e-10*yy && sy > 0 {
			S = append(S, sv)
			Y = append(Y, yv)
			rho = append(rho, 1/sy)
		}

		improvement := fx - fn
		copy(x, xn)
		copy(g, gn)
		fx = fn
		if improvement <= s.FuncTol*math.Max(math.Abs(fx), 1) {
			break
		}
	}
	return fx
}

func dotFree(a, b []float64, free []bool) float64 {
	s := 0.0
	for i, f := range free {
		if f {
			s += a[i] * b[i]
		}
	}
	return s
}

func axpyFree(a float64, x, y []float64, free []bool) {
	for i, f := range free {
		if f {
			y[i] += a * x[i]
		}
	}
}
