package nn

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
)

// dense is a fully connected layer y = x·Wᵀ + b with W stored out × in
// (row j holds the weights of output j).
type dense[T float] struct {
	in, out int
	needDX  bool
	w, bias *Param[T]

	n     int
	x     []T // the last Forward's input (not owned)
	y, dx []T
}

// newDense returns a dense layer from in to out units with He-normal
// weights N(0, 2/in) drawn from rng and zero biases. needInputGrad = false
// skips ∂L/∂x.
func newDense[T float](in, out int, needInputGrad bool, rng *rand.Rand) *dense[T] {
	d := &dense[T]{
		in: in, out: out, needDX: needInputGrad,
		w:    &Param[T]{Name: "dense.w", W: make([]T, out*in), G: make([]T, out*in), Decay: true},
		bias: &Param[T]{Name: "dense.b", W: make([]T, out), G: make([]T, out)},
	}
	heInit(d.w.W, in, rng)
	return d
}

// In returns the per-example input shape {1, 1, in}.
func (d *dense[T]) In() Shape { return Shape{1, 1, d.in} }

// Out returns the per-example output shape {1, 1, out}.
func (d *dense[T]) Out() Shape { return Shape{1, 1, d.out} }

// Params returns the weights (out × in) and biases.
func (d *dense[T]) Params() []*Param[T] { return []*Param[T]{d.w, d.bias} }

// Forward computes y = x·Wᵀ + b for n examples. It keeps a reference to x
// for Backward.
func (d *dense[T]) Forward(x []T, n int, _ bool) []T {
	d.n, d.x = n, x
	d.y = grow(d.y, n*d.out)
	for i := range n {
		copy(d.y[i*d.out:(i+1)*d.out], d.bias.W)
	}
	gemm(blas.NoTrans, blas.Trans, n, d.out, d.in, x, d.in, d.w.W, d.in, 1, d.y, d.out)
	return d.y
}

// Backward accumulates ∂L/∂W = dyᵀ·x and ∂L/∂b = Σ_i dy[i, :] and returns
// ∂L/∂x = dy·W.
func (d *dense[T]) Backward(dy []T) []T {
	n := d.n
	for i := range n {
		row := dy[i*d.out : (i+1)*d.out]
		for j, v := range row {
			d.bias.G[j] += v
		}
	}
	// Both products read dy through gonum's axpy kernels, which skip zero
	// multipliers; after reLU and dropout most of dy is zero.
	// ∂W (out×in) += dyᵀ (out×n) · x (n×in).
	gemm(blas.Trans, blas.NoTrans, d.out, d.in, n, dy, d.out, d.x, d.in, 1, d.w.G, d.in)
	if !d.needDX {
		return nil
	}
	// ∂x (n×in) = dy (n×out) · W (out×in).
	d.dx = grow(d.dx, n*d.in)
	gemm(blas.NoTrans, blas.NoTrans, n, d.in, d.out, dy, d.out, d.w.W, d.in, 0, d.dx, d.in)
	return d.dx
}
