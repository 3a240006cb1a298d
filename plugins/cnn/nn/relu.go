package nn

// reLU is the rectifier y = max(0, x), applied elementwise.
type reLU[T float] struct {
	shape Shape
	y, dx []T
}

// newReLU returns a reLU for examples of the given shape.
func newReLU[T float](s Shape) *reLU[T] { return &reLU[T]{shape: s} }

// In returns the per-example shape.
func (r *reLU[T]) In() Shape { return r.shape }

// Out returns the per-example shape (unchanged).
func (r *reLU[T]) Out() Shape { return r.shape }

// Params returns nil: reLU has no parameters.
func (r *reLU[T]) Params() []*Param[T] { return nil }

// Forward computes y = max(0, x).
func (r *reLU[T]) Forward(x []T, n int, _ bool) []T {
	r.y = grow(r.y, n*r.shape.Size())
	parallelFor(len(r.y), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r.y[i] = max(x[i], 0)
		}
	})
	return r.y
}

// Backward passes dy where the output was positive: ∂y/∂x = 1[x > 0]
// (the subgradient 0 is used at x = 0).
func (r *reLU[T]) Backward(dy []T) []T {
	r.dx = grow(r.dx, len(r.y))
	parallelFor(len(r.y), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if r.y[i] > 0 {
				r.dx[i] = dy[i]
			} else {
				r.dx[i] = 0
			}
		}
	})
	return r.dx
}
