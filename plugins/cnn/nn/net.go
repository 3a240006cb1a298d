package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultChunk is the number of examples a Net pushes through its layers at
// once when Chunk is zero: large enough for efficient GEMMs, small enough
// that the im2col buffers stay in the tens of megabytes.
const DefaultChunk = 64

// Net is a feed-forward classifier: a chain of layers whose last output is
// the class logits, trained with softmax cross-entropy.
type Net[T float] struct {
	Layers  []layer[T]
	Classes int
	// Chunk bounds how many examples go through the layers at once; a
	// mini-batch is processed in chunks whose gradients are summed in order.
	// Zero means DefaultChunk.
	Chunk int

	grad []T
}

// Config is the architecture of NewCNN.
type Config struct {
	Input   Shape   // per-example image shape, e.g. {28, 28, 1} or {32, 32, 3}
	Classes int     // number of classes (10)
	Filters int     // filters of both convolutions
	Dense   int     // units of the hidden dense layer
	Dropout float64 // drop probability after the dense layer, in [0, 1)
	// Activation is the nonlinearity after each hidden layer: reLU (the
	// zero value) or Tanh.
	Activation Activation
}

// Activation selects the hidden layers' nonlinearity in Config.
type Activation int

const (
	ReLUActivation Activation = iota // max(0, x)
	TanhActivation                   // tanh(x)
)

// activation returns the activation layer a for examples of shape s.
func activation[T float](a Activation, s Shape) layer[T] {
	if a == TanhActivation {
		return newTanh[T](s)
	}
	return newReLU[T](s)
}

// NewCNN builds the tuning objective's network: conv3×3(Filters) → reLU →
// maxpool2 → conv3×3(Filters) → reLU → maxpool2 → dense(Dense) → reLU →
// dropout(Dropout) → dense(Classes), with tanh for every reLU when
// Activation is TanhActivation. (The layers run pooling before reLU,
// which computes the same function and gradient.) Weights are He-normal from a stream
// seeded by seed; dropout masks come from a second stream of the same seed.
func NewCNN[T float](cfg Config, seed uint64) (*Net[T], error) {
	switch {
	case cfg.Input.H < 4 || cfg.Input.W < 4 || cfg.Input.C < 1:
		return nil, fmt.Errorf("nn: input shape %+v too small for two 2×2 poolings", cfg.Input)
	case cfg.Classes < 2:
		return nil, fmt.Errorf("nn: need at least 2 classes, got %d", cfg.Classes)
	case cfg.Filters < 1 || cfg.Dense < 1:
		return nil, fmt.Errorf("nn: filters (%d) and dense units (%d) must be positive", cfg.Filters, cfg.Dense)
	case !(cfg.Dropout >= 0 && cfg.Dropout < 1):
		return nil, fmt.Errorf("nn: dropout %v outside [0, 1)", cfg.Dropout)
	case cfg.Activation != ReLUActivation && cfg.Activation != TanhActivation:
		return nil, fmt.Errorf("nn: unknown activation %d", cfg.Activation)
	}
	init := rand.New(rand.NewPCG(seed, 0x636e6e2d696e6974)) // "cnn-init"
	drop := rand.New(rand.NewPCG(seed, 0x636e6e2d64726f70)) // "cnn-drop"
	// reLU and tanh are monotone, so maxpool(act(x)) = act(maxpool(x)),
	// with the same gradient (for reLU, ties at a window maximum ≤ 0 give 0
	// either way). Pooling first runs the activation on a quarter of the
	// values.
	c1 := newConv3x3[T](cfg.Input, cfg.Filters, false, init)
	p1 := newMaxPool2[T](c1.Out())
	r1 := activation[T](cfg.Activation, p1.Out())
	c2 := newConv3x3[T](r1.Out(), cfg.Filters, true, init)
	p2 := newMaxPool2[T](c2.Out())
	r2 := activation[T](cfg.Activation, p2.Out())
	d1 := newDense[T](r2.Out().Size(), cfg.Dense, true, init)
	r3 := activation[T](cfg.Activation, d1.Out())
	do := newDropout[T](r3.Out(), cfg.Dropout, drop)
	d2 := newDense[T](cfg.Dense, cfg.Classes, true, init)
	return &Net[T]{
		Layers:  []layer[T]{c1, p1, r1, c2, p2, r2, d1, r3, do, d2},
		Classes: cfg.Classes,
	}, nil
}

// in returns the per-example input shape.
func (n *Net[T]) in() Shape { return n.Layers[0].In() }

// Params lists every layer's trainable tensors in layer order.
func (n *Net[T]) Params() []*Param[T] {
	var ps []*Param[T]
	for _, l := range n.Layers {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// zeroGrad clears every parameter's gradient.
func (n *Net[T]) zeroGrad() {
	for _, p := range n.Params() {
		clear(p.G)
	}
}

func (n *Net[T]) chunk() int {
	if n.Chunk > 0 {
		return n.Chunk
	}
	return DefaultChunk
}

// forward returns the logits of m examples (m × Classes). The result is
// owned by the last layer; with m above the chunk size only the last
// chunk's logits would survive, so Forward requires m ≤ Chunk — use
// Predict for larger sets.
func (n *Net[T]) forward(x []T, m int, train bool) []T {
	h := x
	for _, l := range n.Layers {
		h = l.Forward(h, m, train)
	}
	return h
}

// gradient adds to each parameter's G the gradient of the mean
// cross-entropy over the m examples x with the given labels, and returns
// that mean loss (without any L2 term). Training-mode layers (dropout) are
// active.
func (n *Net[T]) gradient(x []T, labels []int, m int) float64 {
	size, ch := n.in().Size(), n.chunk()
	var loss float64
	for lo := 0; lo < m; lo += ch {
		hi := min(lo+ch, m)
		logits := n.forward(x[lo*size:hi*size], hi-lo, true)
		n.grad = grow(n.grad, len(logits))
		loss += softmaxCrossEntropy(logits, labels[lo:hi], n.Classes, 1/float64(m), n.grad)
		g := n.grad
		for i := len(n.Layers) - 1; i >= 0 && g != nil; i-- {
			g = n.Layers[i].Backward(g)
		}
	}
	return loss / float64(m)
}

// Predict writes the predicted class (arg-max logit) of each of the m
// examples into dst (grown as needed) and returns it. An example whose
// logits are not all finite is predicted as −1, i.e. always wrong.
func (n *Net[T]) Predict(x []T, m int, dst []int) []int {
	if cap(dst) < m {
		dst = make([]int, m)
	}
	dst = dst[:m]
	size, ch := n.in().Size(), n.chunk()
	for lo := 0; lo < m; lo += ch {
		hi := min(lo+ch, m)
		logits := n.forward(x[lo*size:hi*size], hi-lo, false)
		for i := range hi - lo {
			dst[lo+i] = argmax(logits[i*n.Classes : (i+1)*n.Classes])
		}
	}
	return dst
}

// Accuracy returns the fraction of examples whose predicted class equals
// the label (0 for an empty set).
func (n *Net[T]) Accuracy(x []T, labels []int) float64 {
	if len(labels) == 0 {
		return 0
	}
	pred := n.Predict(x, len(labels), nil)
	right := 0
	for i, p := range pred {
		if p == labels[i] {
			right++
		}
	}
	return float64(right) / float64(len(labels))
}

// argmax returns the index of the largest value (the first on ties), or −1
// if any value is NaN or infinite.
func argmax[T float](z []T) int {
	best := -1
	for i, v := range z {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return -1
		}
		if best < 0 || v > z[best] {
			best = i
		}
	}
	return best
}
