// Package nn is a small convolutional-network library: the layers, loss,
// optimizer and training loop behind tesbo's CNN hyper-parameter tuning
// objective (plugins/cnn). It exists as its own package so the objective's
// main stays a thin plugin wrapper and the layers can be gradient-checked and
// reused on their own.
//
// # Tensors and layout
//
// Every tensor is a flat slice, example-major, and each example is stored
// height × width × channels (NHWC, channels fastest). A layer's per-example
// shape is a Shape{H, W, C}; dense layers use Shape{1, 1, C}.
//
// # Precision
//
// The layers are generic over Float (float32 or float64). Training runs in
// float32: gonum's pure-Go BLAS packs four float32 lanes per SSE instruction
// against two float64, which makes its GEMMs faster (plugins/cnn's README,
// "Throughput"), halves the memory traffic of the im2col buffers, and
// matches what the PyTorch peer uses. The gradient checks run in float64, where central finite differences
// are accurate to ~1e-8 and a wrong backward pass cannot hide in rounding
// noise; a float32 check with loose tolerances runs as well.
//
// # Convolutions and GEMM
//
// A 3×3 convolution is im2col (one row of 9·C values per output pixel)
// followed by a GEMM through gonum's BLAS (blas32/blas64, so a cgo BLAS
// installed with blas32.Use is picked up too). gonum's native GEMM has a
// dot-product kernel (C = A·Bᵀ, "NT") and axpy kernels (the other forms);
// in its parallel mode it cuts C into 64×64 blocks, which makes every axpy
// 64 long. Our driver (gemm.go) instead cuts C into tiles small enough for
// gonum's serial path, shares them among GOMAXPROCS goroutines, and slices
// the inner dimension so the operands stay in cache. Forward products use
// the dot kernel (several times faster than short axpys); backward products use
// the axpy kernels with 192-wide tiles because those skip zero multipliers,
// and below a 2×2 max-pool, reLU and dropout most of the incoming gradient
// is zero. See bench/README.md in the parent directory for throughput
// against PyTorch.
//
// # Determinism
//
// A fixed seed gives bit-identical results regardless of scheduling: every
// parallel region partitions its output, and every output element is
// reduced by one goroutine in a fixed order (a GEMM tile's dot products,
// a bias gradient's column sum). Mini-batches are processed in chunks whose
// gradients are added in chunk order.
//
// # Model and training
//
// NewCNN builds the tuning objective's network: two blocks of
// [3×3 convolution (zero padding 1) → reLU → 2×2 max-pool], then a dense layer
// with reLU and inverted dropout, then a linear layer into softmax
// cross-entropy. Train runs SGD with momentum (see SGD) with an L2 penalty on
// the weights and the learning rate lr/(1 + decay·step).
package nn
