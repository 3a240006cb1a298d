package nn

import "math/rand/v2"

// dropout is inverted dropout: in training each value is kept with
// probability 1−p and scaled by 1/(1−p), so the expected activation is
// unchanged and evaluation is the identity.
type dropout[T float] struct {
	shape Shape
	p     float64
	rng   *rand.Rand

	train bool
	scale T
	mask  []T // 0 or 1/(1−p) per value
	y, dx []T
}

// newDropout returns a dropout layer with drop probability p ∈ [0, 1) whose
// masks are drawn from rng (sequentially, so a fixed seed repeats them).
func newDropout[T float](s Shape, p float64, rng *rand.Rand) *dropout[T] {
	return &dropout[T]{shape: s, p: p, rng: rng, scale: T(1 / (1 - p))}
}

// In returns the per-example shape.
func (d *dropout[T]) In() Shape { return d.shape }

// Out returns the per-example shape (unchanged).
func (d *dropout[T]) Out() Shape { return d.shape }

// Params returns nil: dropout has no parameters.
func (d *dropout[T]) Params() []*Param[T] { return nil }

// Forward multiplies x by a fresh mask when train is set, else copies x.
func (d *dropout[T]) Forward(x []T, n int, train bool) []T {
	size := n * d.shape.Size()
	d.train = train && d.p > 0
	d.y = grow(d.y, size)
	if !d.train {
		copy(d.y, x[:size])
		return d.y
	}
	d.mask = grow(d.mask, size)
	for i := range d.mask {
		if d.rng.Float64() < d.p {
			d.mask[i] = 0
		} else {
			d.mask[i] = d.scale
		}
	}
	for i, m := range d.mask {
		d.y[i] = x[i] * m
	}
	return d.y
}

// Backward applies the same mask to dy (identity in evaluation mode).
func (d *dropout[T]) Backward(dy []T) []T {
	d.dx = grow(d.dx, len(d.y))
	if !d.train {
		copy(d.dx, dy)
		return d.dx
	}
	for i, m := range d.mask {
		d.dx[i] = dy[i] * m
	}
	return d.dx
}
