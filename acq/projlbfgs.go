package acq

import (
	"context"
	"math"
)

// projectedLBFGS minimizes p over the box [0,1]^n starting from x, which it
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
func projectedLBFGS(ctx context.Context, p *problem, x []float64, s OptimizeSettings) float64 {
	n := len(x)
	clipUnit(x)
	g := make([]float64, n)
	fx := p.valueGrad(x, g)
	if math.IsInf(fx, 0) {
		return fx
	}
	mem := newLBFGSMemory(s.Memory)
	dir := make([]float64, n)
	free := make([]bool, n)
	xn := make([]float64, n)
	gn := make([]float64, n)

	for iter := 0; iter < s.MaxIter; iter++ {
		if ctx.Err() != nil {
			break
		}
		if activeSet(x, g, free) < s.GradTol {
			break
		}
		k, ok := mem.direction(g, free, dir)
		if !ok {
			break // no descent direction even along steepest descent
		}
		fn, accepted := lineSearch(ctx, p, x, g, dir, firstStep(dir, k), fx, xn, gn)
		if !accepted {
			if k == 0 {
				break // failed even along steepest descent
			}
			mem.reset()
			continue
		}
		mem.push(x, xn, g, gn)
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

// activeSet marks in free the variables not held at a bound by the
// gradient g and returns the projected gradient's size |P(x − g) − x|_∞.
func activeSet(x, g []float64, free []bool) float64 {
	const boundEp = 0 // variables are exactly at a bound after projection
	pg := 0.0
	for i := range x {
		free[i] = !(x[i] <= boundEp && g[i] > 0) && !(x[i] >= 1-boundEp && g[i] < 0)
		step := math.Min(math.Max(x[i]-g[i], 0), 1) - x[i]
		pg = math.Max(pg, math.Abs(step))
	}
	return pg
}

// firstStep is the line search's first step length: 1 for quasi-Newton
// directions (k > 0 pairs); for steepest descent, a step moving no
// coordinate by more than 0.2 of the box.
func firstStep(dir []float64, k int) float64 {
	if k > 0 {
		return 1
	}
	dmax := 0.0
	for _, v := range dir {
		dmax = math.Max(dmax, math.Abs(v))
	}
	return math.Min(1, 0.2/dmax)
}

// lineSearch backtracks along the projected path xn = P(x + t·dir), halving
// t from t until the Armijo condition holds (accepted; xn, gn and the
// returned value are then the new point's) or the step no longer moves x.
func lineSearch(ctx context.Context, p *problem, x, g, dir []float64, t, fx float64, xn, gn []float64) (float64, bool) {
	const (
		c1    = 1e-4
		maxLS = 40
	)
	var fn float64
	for ls := 0; ls < maxLS; ls++ {
		if ctx.Err() != nil {
			// One evaluation of a large batch can take seconds (qEI at
			// q = 1000): a cancelled search stops between them.
			return fn, false
		}
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
			return fn, false
		}
		fn = p.valueGrad(xn, gn)
		if !math.IsInf(fn, 0) && fn <= fx+c1*decrease {
			return fn, true
		}
		t *= 0.5
	}
	return fn, false
}

// lbfgsMemory holds up to m correction pairs (s, y) with ρ = 1/sᵀy, oldest
// first.
type lbfgsMemory struct {
	m        int
	S, Y     [][]float64
	rho      []float64
	alphaBuf []float64
}

func newLBFGSMemory(m int) *lbfgsMemory {
	return &lbfgsMemory{m: m, S: make([][]float64, 0, m), Y: make([][]float64, 0, m),
		rho: make([]float64, 0, m), alphaBuf: make([]float64, m)}
}

// reset empties the memory (steepest descent next).
func (mem *lbfgsMemory) reset() {
	mem.S, mem.Y, mem.rho = mem.S[:0], mem.Y[:0], mem.rho[:0]
}

// direction writes into dir the two-loop recursion's quasi-Newton direction
// −H·g on the free variables (0 on the others) and returns the number of
// pairs used. A direction that is not a descent direction resets the memory
// to steepest descent (k = 0); ok is false when even that is zero.
func (mem *lbfgsMemory) direction(g []float64, free []bool, dir []float64) (k int, ok bool) {
	for i := range dir {
		if free[i] {
			dir[i] = -g[i]
		} else {
			dir[i] = 0
		}
	}
	S, Y, rho, alpha := mem.S, mem.Y, mem.rho, mem.alphaBuf
	k = len(S)
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
	if dotFree(g, dir, free) < 0 {
		return k, true
	}
	// Not a descent direction on the free set: restart from steepest
	// descent.
	mem.reset()
	gd := 0.0
	for i := range dir {
		if free[i] {
			dir[i] = -g[i]
			gd -= g[i] * g[i]
		} else {
			dir[i] = 0
		}
	}
	return 0, gd != 0
}

// push adds the pair (xn − x, gn − g), dropping the oldest when full, if it
// keeps the implicit inverse Hessian positive definite (sᵀy > 0 with a
// relative margin).
func (mem *lbfgsMemory) push(x, xn, g, gn []float64) {
	n, m := len(x), mem.m
	var sv, yv []float64
	if len(mem.S) == m {
		sv, yv = mem.S[0], mem.Y[0]
		copy(mem.S, mem.S[1:])
		copy(mem.Y, mem.Y[1:])
		copy(mem.rho, mem.rho[1:])
		mem.S, mem.Y, mem.rho = mem.S[:m-1], mem.Y[:m-1], mem.rho[:m-1]
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
		mem.S = append(mem.S, sv)
		mem.Y = append(mem.Y, yv)
		mem.rho = append(mem.rho, 1/sy)
	}
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
