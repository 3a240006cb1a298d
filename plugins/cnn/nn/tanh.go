package nn

import "math"

// tanh is the hyperbolic tangent y = tanh(x), applied elementwise.
type tanh[T float] struct {
	shape Shape
	y, dx []T
}

// newTanh returns a Tanh for examples of the given shape.
func newTanh[T float](s Shape) *tanh[T] { return &tanh[T]{shape: s} }

// In returns the per-example shape.
func (a *tanh[T]) In() Shape { return a.shape }

// Out returns the per-example shape (unchanged).
func (a *tanh[T]) Out() Shape { return a.shape }

// Params returns nil: Tanh has no parameters.
func (a *tanh[T]) Params() []*Param[T] { return nil }

// Forward computes y = tanh(x).
func (a *tanh[T]) Forward(x []T, n int, _ bool) []T {
	a.y = grow(a.y, n*a.shape.Size())
	parallelFor(len(a.y), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a.y[i] = T(math.Tanh(float64(x[i])))
		}
	})
	return a.y
}

// Backward returns dy·(1 − y²), the derivative of tanh at the last input.
func (a *tanh[T]) Backward(dy []T) []T {
	a.dx = grow(a.dx, len(a.y))
	parallelFor(len(a.y), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a.dx[i] = dy[i] * (1 - a.y[i]*a.y[i])
		}
	})
	return a.dx
}
