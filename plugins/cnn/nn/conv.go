package nn

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
)

// conv3x3 is a 3×3 convolution with stride 1 and zero padding 1 (output
// H×W equals input H×W), computed as im2col + GEMM:
//
//	cols[p, (ky·3+kx)·C + c] = x[b, y+ky−1, x+kx−1, c]   (0 outside the image)
//	y[p, f] = Σ_k cols[p, k]·W[f, k] + bias[f]
//
// where p = (b, y, x) runs over the n·H·W output pixels and k over 9·C.
type conv3x3[T float] struct {
	in      Shape
	filters int
	needDX  bool
	w, bias *Param[T]

	n                 int
	cols, colsT       []T // n·H·W × 9C and its transpose
	wT                []T // 9C × F
	y, dyT, dcols, dx []T
	smallInner        bool
}

// newConv3x3 returns a convolution from shape in to `filters` channels with
// He-normal weights, N(0, 2/(9·C)), drawn from rng, and zero biases.
// needInputGrad = false skips ∂L/∂x (for a network's first layer).
func newConv3x3[T float](in Shape, filters int, needInputGrad bool, rng *rand.Rand) *conv3x3[T] {
	k := 9 * in.C
	c := &conv3x3[T]{
		in: in, filters: filters, needDX: needInputGrad,
		w:    &Param[T]{Name: "conv.w", W: make([]T, filters*k), G: make([]T, filters*k), Decay: true},
		bias: &Param[T]{Name: "conv.b", W: make([]T, filters), G: make([]T, filters)},
		// gonum's dot kernel is slow for very short dots (k < 32); the axpy
		// form over a transposed W wins there (the first layer: k = 9C).
		smallInner: k < 32,
	}
	heInit(c.w.W, k, rng)
	return c
}

// heInit fills w with He-normal values N(0, 2/fanIn) (He et al., 2015).
func heInit[T float](w []T, fanIn int, rng *rand.Rand) {
	sd := math.Sqrt(2 / float64(fanIn))
	for i := range w {
		w[i] = T(rng.NormFloat64() * sd)
	}
}

// In returns the per-example input shape.
func (c *conv3x3[T]) In() Shape { return c.in }

// Out returns the per-example output shape (H, W, filters).
func (c *conv3x3[T]) Out() Shape { return Shape{c.in.H, c.in.W, c.filters} }

// Params returns the weights (filters × 9C, row f holds filter f in
// (ky, kx, c) order) and the biases.
func (c *conv3x3[T]) Params() []*Param[T] { return []*Param[T]{c.w, c.bias} }

// transposedW returns Wᵀ (9C × F). It is recomputed on every call: W is at
// most 256×2304 values, negligible next to the GEMMs that use it, and no
// cache can go stale when W changes.
func (c *conv3x3[T]) transposedW() []T {
	k := 9 * c.in.C
	c.wT = grow(c.wT, k*c.filters)
	transpose(c.wT, c.w.W, c.filters, k)
	return c.wT
}

// Forward computes the convolution of n examples.
func (c *conv3x3[T]) Forward(x []T, n int, _ bool) []T {
	c.n = n
	k, f := 9*c.in.C, c.filters
	rows := n * c.in.H * c.in.W
	c.cols = grow(c.cols, rows*k)
	im2col(c.cols, x, n, c.in)
	c.y = grow(c.y, rows*f)
	// Bias first, then y += cols·Wᵀ (beta = 1).
	parallelFor(rows, 256, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			copy(c.y[p*f:(p+1)*f], c.bias.W)
		}
	})
	if c.smallInner {
		gemm(blas.NoTrans, blas.NoTrans, rows, f, k, c.cols, k, c.transposedW(), f, 1, c.y, f)
	} else {
		gemm(blas.NoTrans, blas.Trans, rows, f, k, c.cols, k, c.w.W, k, 1, c.y, f)
	}
	return c.y
}

// Backward accumulates ∂L/∂W = dyᵀ·cols and ∂L/∂bias = Σ_p dy[p, :], and
// returns ∂L/∂x = col2im(dy·W) when the layer needs it.
func (c *conv3x3[T]) Backward(dy []T) []T {
	k, f := 9*c.in.C, c.filters
	rows := c.n * c.in.H * c.in.W
	// Bias gradient: column sums, one goroutine per filter range.
	parallelFor(f, 1, func(lo, hi int) {
		for p := range rows {
			row := dy[p*f : (p+1)*f]
			for j := lo; j < hi; j++ {
				c.bias.G[j] += row[j]
			}
		}
	})
	// Both products read dy through gonum's axpy kernels, which skip zero
	// multipliers: below a 2×2 max-pool at most one in four entries of dy
	// is non-zero (and reLU zeroes more), so this does a quarter of the
	// dense work or less — faster than the denser dot-product (NT) form.
	// ∂W (F×K) += dyᵀ (F×rows) · cols (rows×K). With few input channels
	// (K = 9C < 32) the axpys would be K long and mostly call overhead, so
	// the first layer uses the dot-product form on transposed copies.
	if c.smallInner {
		c.dyT = grow(c.dyT, rows*f)
		transpose(c.dyT, dy, rows, f)
		c.colsT = grow(c.colsT, rows*k)
		transpose(c.colsT, c.cols, rows, k)
		gemm(blas.NoTrans, blas.Trans, f, k, rows, c.dyT, rows, c.colsT, rows, 1, c.w.G, k)
	} else {
		gemm(blas.Trans, blas.NoTrans, f, k, rows, dy, f, c.cols, k, 1, c.w.G, k)
	}
	if !c.needDX {
		return nil
	}
	// ∂cols (rows×K) = dy (rows×F) · W (F×K).
	c.dcols = grow(c.dcols, rows*k)
	gemm(blas.NoTrans, blas.NoTrans, rows, k, f, dy, f, c.w.W, k, 0, c.dcols, k)
	c.dx = grow(c.dx, c.n*c.in.Size())
	col2im(c.dx, c.dcols, c.n, c.in)
	return c.dx
}

// im2col writes one row of 9·C values per output pixel (see Conv3x3),
// splitting the examples among goroutines.
func im2col[T float](cols, x []T, n int, s Shape) {
	k := 9 * s.C
	parallelFor(n, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			img := x[b*s.Size() : (b+1)*s.Size()]
			for y := range s.H {
				for xx := range s.W {
					row := cols[((b*s.H+y)*s.W+xx)*k:][:k]
					for ky := range 3 {
						iy := y + ky - 1
						for kx := range 3 {
							ix := xx + kx - 1
							dst := row[(ky*3+kx)*s.C:][:s.C]
							if iy < 0 || iy >= s.H || ix < 0 || ix >= s.W {
								clear(dst)
								continue
							}
							copy(dst, img[(iy*s.W+ix)*s.C:])
						}
					}
				}
			}
		}
	})
}

// col2im is the adjoint of im2col: it adds each column entry back into the
// input position it was copied from. Each example is summed by one goroutine
// in a fixed order.
func col2im[T float](dx, cols []T, n int, s Shape) {
	k := 9 * s.C
	parallelFor(n, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			img := dx[b*s.Size() : (b+1)*s.Size()]
			clear(img)
			for y := range s.H {
				for xx := range s.W {
					row := cols[((b*s.H+y)*s.W+xx)*k:][:k]
					for ky := range 3 {
						iy := y + ky - 1
						if iy < 0 || iy >= s.H {
							continue
						}
						for kx := range 3 {
							ix := xx + kx - 1
							if ix < 0 || ix >= s.W {
								continue
							}
							src := row[(ky*3+kx)*s.C:][:s.C]
							dst := img[(iy*s.W+ix)*s.C:][:s.C]
							for c, v := range src {
								dst[c] += v
							}
						}
					}
				}
			}
		}
	})
}
