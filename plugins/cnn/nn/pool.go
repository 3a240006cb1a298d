package nn

// maxPool2 is 2×2 max-pooling with stride 2. An odd trailing row or column
// is dropped (floor), as in Keras's default "valid" pooling.
type maxPool2[T float] struct {
	in, out Shape
	n       int
	arg     []int32 // index into the input of each output's maximum
	y, dx   []T
}

// newMaxPool2 returns a pooling layer for inputs of shape s (H, W ≥ 2).
func newMaxPool2[T float](s Shape) *maxPool2[T] {
	return &maxPool2[T]{in: s, out: Shape{s.H / 2, s.W / 2, s.C}}
}

// In returns the per-example input shape.
func (p *maxPool2[T]) In() Shape { return p.in }

// Out returns the per-example output shape (H/2, W/2, C).
func (p *maxPool2[T]) Out() Shape { return p.out }

// Params returns nil: pooling has no parameters.
func (p *maxPool2[T]) Params() []*Param[T] { return nil }

// Forward takes the maximum of each 2×2 window per channel. Ties go to the
// first element in row-major window order.
func (p *maxPool2[T]) Forward(x []T, n int, _ bool) []T {
	p.n = n
	in, out := p.in, p.out
	p.y = grow(p.y, n*out.Size())
	if cap(p.arg) < len(p.y) {
		p.arg = make([]int32, len(p.y))
	}
	p.arg = p.arg[:len(p.y)]
	parallelFor(n, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			for oy := range out.H {
				for ox := range out.W {
					o := ((b*out.H+oy)*out.W + ox) * out.C
					i0 := b*in.Size() + ((2*oy)*in.W+2*ox)*in.C // window's top-left
					i2 := i0 + in.W*in.C                        // bottom-left
					top, bot := x[i0:i0+2*in.C], x[i2:i2+2*in.C]
					y, arg := p.y[o:o+out.C], p.arg[o:o+out.C]
					for c := range y {
						best, at := top[c], i0+c
						if v := top[in.C+c]; v > best {
							best, at = v, i0+in.C+c
						}
						if v := bot[c]; v > best {
							best, at = v, i2+c
						}
						if v := bot[in.C+c]; v > best {
							best, at = v, i2+in.C+c
						}
						y[c], arg[c] = best, int32(at)
					}
				}
			}
		}
	})
	return p.y
}

// Backward routes each output gradient to the input that was the maximum.
func (p *maxPool2[T]) Backward(dy []T) []T {
	p.dx = grow(p.dx, p.n*p.in.Size())
	inSize, outSize := p.in.Size(), p.out.Size()
	parallelFor(p.n, 1, func(lo, hi int) {
		clear(p.dx[lo*inSize : hi*inSize])
		for o := lo * outSize; o < hi*outSize; o++ {
			p.dx[p.arg[o]] += dy[o]
		}
	})
	return p.dx
}
