package nn

// ReLU is the rectifier y = max(0, x), applied elementwise.
type ReLU[T Float] struct {
	shape Shape
	y, dx []T
}

// NewReLU returns a ReLU for examples of the given shape.
func NewReLU[T Float](s Shape) *ReLU[T] { return &ReLU[T]{shape: s} }

// In returns the per-example shape.
func (r *ReLU[T]) In() Shape { return r.shape }

// Out returns the per-example shape (unchanged).
func (r *ReLU[T]) Out() Shape { return r.shape }

// Params returns nil: ReLU has no parameters.
func (r *ReLU[T]) Params() []*Param[T] { return nil }

// Forward computes y = max(0, x).
func (r *ReLU[T]) Forward(x []T, n int, _ bool) []T {
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
func (r *ReLU[T]) Backward(dy []T) []T {
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
