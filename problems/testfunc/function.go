package testfunc

import (
	"errors"
	"fmt"
	"math"
)

// errNoGradient is returned by Function.Grad when the function has no
// analytic gradient.
var errNoGradient = errors.New("testfunc: function has no analytic gradient")

// defaultNoiseVar is the observation noise variance σ_n² = 1e-4 the paper uses
// for its synthetic functions (§5.1); it is Function.NoiseVar for every
// function except Log10P, whose data set carries its own.
const defaultNoiseVar = 1e-4

// domainTol is the relative slack (times the side length) within which an
// input outside [Lower, Upper] is clamped rather than rejected: a host that
// maps u ∈ [0,1] to Lower + u·(Upper−Lower) may overshoot a bound by an ulp.
const domainTol = 1e-9

// Function is a benchmark objective in maximization form on a box domain
// [Lower, Upper] ⊂ R^Dim given in the function's native units. Classic
// minimization benchmarks are negated, so Optimum is always the global
// maximum f* = max f(x) and every point of Maximizers attains it.
//
// A Function is immutable after construction and safe for concurrent use;
// callers must not modify its slices.
type Function struct {
	// Name is the short registry name ("branin", "hartmann6", ...).
	Name string
	// Dim is the input dimension d.
	Dim int
	// Lower and Upper are the inclusive bounds of the domain (len Dim).
	Lower, Upper []float64
	// Optimum is the global maximum f* (native output units).
	Optimum float64
	// Maximizers lists the known global maximizers (native units), at least one.
	Maximizers [][]float64
	// NoiseVar is the default observation noise variance σ_n² for this function.
	NoiseVar float64

	f    func(x []float64) float64
	grad func(x, dst []float64) float64 // nil when there is no analytic gradient
}

// Eval returns f(x) for x in native units. It fails when len(x) ≠ Dim, when
// x has a NaN or infinite entry or lies outside the domain (inputs within
// 1e-9 of a side length outside a bound are clamped onto it).
func (fn *Function) Eval(x []float64) (float64, error) {
	xc, err := fn.check(x)
	if err != nil {
		return math.NaN(), err
	}
	return fn.f(xc), nil
}

// hasGrad reports whether gradient is available.
func (fn *Function) hasGrad() bool { return fn.grad != nil }

// gradient writes ∇f(x) (native units, len Dim) into dst and returns f(x). It
// returns errNoGradient if the function has none, and the errors of Eval. At
// a clamped boundary input the gradient is the one at the clamped point.
func (fn *Function) gradient(x, dst []float64) (float64, error) {
	if fn.grad == nil {
		return math.NaN(), fmt.Errorf("%s: %w", fn.Name, errNoGradient)
	}
	if len(dst) != fn.Dim {
		return math.NaN(), fmt.Errorf("%s: gradient buffer has length %d, want %d", fn.Name, len(dst), fn.Dim)
	}
	xc, err := fn.check(x)
	if err != nil {
		return math.NaN(), err
	}
	return fn.grad(xc, dst), nil
}

// EvalUnit returns f(x(u)) for u in the unit cube [0,1]^Dim, where
// x(u) = Lower + u·(Upper − Lower) (see ToNative).
func (fn *Function) EvalUnit(u []float64) (float64, error) {
	x, err := fn.ToNative(u)
	if err != nil {
		return math.NaN(), err
	}
	return fn.Eval(x)
}

// gradUnit writes the gradient with respect to the unit-cube coordinates,
// ∂f/∂u_j = (Upper_j − Lower_j)·∂f/∂x_j, into dst and returns f(x(u)).
func (fn *Function) gradUnit(u, dst []float64) (float64, error) {
	x, err := fn.ToNative(u)
	if err != nil {
		return math.NaN(), err
	}
	v, err := fn.gradient(x, dst)
	if err != nil {
		return v, err
	}
	for j := range dst {
		dst[j] *= fn.Upper[j] - fn.Lower[j]
	}
	return v, nil
}

// ToNative maps u ∈ [0,1]^Dim to x = Lower + u·(Upper − Lower) in a new slice.
func (fn *Function) ToNative(u []float64) ([]float64, error) {
	if len(u) != fn.Dim {
		return nil, fmt.Errorf("%s: input has dimension %d, want %d", fn.Name, len(u), fn.Dim)
	}
	x := make([]float64, fn.Dim)
	for j, v := range u {
		x[j] = fn.Lower[j] + v*(fn.Upper[j]-fn.Lower[j])
	}
	return x, nil
}

// toUnit maps x in native units to u = (x − Lower)/(Upper − Lower) in a new slice.
func (fn *Function) toUnit(x []float64) ([]float64, error) {
	if len(x) != fn.Dim {
		return nil, fmt.Errorf("%s: input has dimension %d, want %d", fn.Name, len(x), fn.Dim)
	}
	u := make([]float64, fn.Dim)
	for j, v := range x {
		u[j] = (v - fn.Lower[j]) / (fn.Upper[j] - fn.Lower[j])
	}
	return u, nil
}

// Regret returns the immediate regret f* − f(x) ≥ 0 of a recommendation x
// (native units), the quantity the paper's figures plot.
func (fn *Function) Regret(x []float64) (float64, error) {
	v, err := fn.Eval(x)
	if err != nil {
		return math.NaN(), err
	}
	return fn.Optimum - v, nil
}

// check validates x and returns it, or a clamped copy when it lies within
// domainTol outside the box.
func (fn *Function) check(x []float64) ([]float64, error) {
	if len(x) != fn.Dim {
		return nil, fmt.Errorf("%s: input has dimension %d, want %d", fn.Name, len(x), fn.Dim)
	}
	out := x
	for j, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: input coordinate %d is %v, want a finite number", fn.Name, j, v)
		}
		lo, hi := fn.Lower[j], fn.Upper[j]
		if v >= lo && v <= hi {
			continue
		}
		slack := domainTol * (hi - lo)
		if v < lo-slack || v > hi+slack {
			return nil, fmt.Errorf("%s: input coordinate %d = %g is outside the domain [%g, %g]", fn.Name, j, v, lo, hi)
		}
		if &out[0] == &x[0] {
			out = append([]float64(nil), x...)
		}
		out[j] = math.Min(math.Max(v, lo), hi)
	}
	return out, nil
}

// box returns a Dim-long slice filled with v.
func box(d int, v float64) []float64 {
	s := make([]float64, d)
	for i := range s {
		s[i] = v
	}
	return s
}

// checkDim validates the dimension of an any-dimension function.
func checkDim(name string, d, min int) error {
	const max = 10000
	if d < min || d > max {
		return fmt.Errorf("%s: dimension %d not supported, want %d ≤ dim ≤ %d", name, d, min, max)
	}
	return nil
}
