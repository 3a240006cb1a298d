package nn

// Shape is the per-example shape of a tensor: height × width × channels,
// stored channels fastest. Dense activations are Shape{1, 1, C}.
type Shape struct{ H, W, C int }

// Size is the number of values per example, H·W·C.
func (s Shape) Size() int { return s.H * s.W * s.C }

// Param is one trainable tensor with its gradient accumulator.
type Param[T float] struct {
	Name string
	W    []T // values
	G    []T // ∂L/∂W, accumulated by Backward until ZeroGrad
	// Decay marks weights that the L2 penalty applies to (biases are
	// exempt, as in Keras's kernel_regularizer).
	Decay bool
}

// layer is one differentiable stage of a feed-forward network.
//
// Forward and Backward own their output slices: the result is valid until
// the next call of the same method, and callers must not keep it.
type layer[T float] interface {
	// In and Out are the per-example input and output shapes.
	In() Shape
	Out() Shape
	// Forward maps n examples x (n·In().Size() values) to the layer's
	// output. train selects training behaviour (dropout masks); layers
	// without such behaviour ignore it.
	Forward(x []T, n int, train bool) []T
	// Backward takes ∂L/∂y for the examples of the last Forward, adds
	// ∂L/∂θ into each parameter's G and returns ∂L/∂x, or nil when the
	// layer was built without an input gradient (a network's first layer).
	Backward(dy []T) []T
	// Params lists the trainable tensors (none for reLU, pooling, dropout).
	Params() []*Param[T]
}

// grow returns s resized to n values, reusing its storage when large enough.
func grow[T float](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
