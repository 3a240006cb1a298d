package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The gradient checks run in float64, where a central difference with
// h = 1e-5 has truncation error O(h²) ≈ 1e-10 and rounding error
// ≈ 1e-16/h ≈ 1e-11, so a tolerance of 1e-6 (relative to the gradient's
// scale) separates a correct backward pass from any real mistake.
const (
	fdStep = 1e-5
	fdTol  = 1e-6
)

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// centralDiff returns (f(v+h) − f(v−h)) / 2h after perturbing *v in place,
// restoring it afterwards.
func centralDiff(v *float64, f func() float64) float64 {
	old := *v
	*v = old + fdStep
	up := f()
	*v = old - fdStep
	down := f()
	*v = old
	return (up - down) / (2 * fdStep)
}

// compareGrad fails if analytic and numeric gradients differ by more than
// fdTol relative to the larger of 1 and the gradient's largest magnitude.
func compareGrad(t *testing.T, what string, analytic, numeric []float64) {
	t.Helper()
	scale := 1.0
	for _, g := range numeric {
		scale = max(scale, math.Abs(g))
	}
	worst, at := 0.0, -1
	for i := range analytic {
		if d := math.Abs(analytic[i] - numeric[i]); d > worst {
			worst, at = d, i
		}
	}
	if worst > fdTol*scale {
		t.Errorf("%s: analytic and finite-difference gradients differ by %.3g at %d (analytic %.9g, numeric %.9g)",
			what, worst, at, analytic[at], numeric[at])
	}
}

// checkLayer compares a layer's Backward with central differences of the
// scalar L = Σ r ⊙ Forward(x) for a fixed random projection r, for the input
// (when the layer returns ∂x) and for every parameter. reset is called
// before every Forward (dropout uses it to replay its mask).
func checkLayer(t *testing.T, name string, l layer[float64], n int, rng *rand.Rand, reset func()) {
	t.Helper()
	if reset == nil {
		reset = func() {}
	}
	x := randSlice(rng, n*l.In().Size())
	r := randSlice(rng, n*l.Out().Size())
	loss := func() float64 {
		reset()
		return dot(r, l.Forward(x, n, true))
	}
	for _, p := range l.Params() {
		clear(p.G)
	}
	reset()
	l.Forward(x, n, true)
	dx := l.Backward(r)
	if dx != nil {
		dx = append([]float64(nil), dx...)
		num := make([]float64, len(x))
		for i := range x {
			num[i] = centralDiff(&x[i], loss)
		}
		compareGrad(t, name+" ∂x", dx, num)
	}
	for _, p := range l.Params() {
		g := append([]float64(nil), p.G...)
		num := make([]float64, len(p.W))
		for i := range p.W {
			num[i] = centralDiff(&p.W[i], loss)
		}
		compareGrad(t, name+" ∂"+p.Name, g, num)
	}
}

func TestConvGradient(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         Shape
		filters    int
		n          int
		smallInner bool // which GEMM forms the layer uses (see Conv3x3)
	}{
		// K = 9C < 32 (smallInner): forward y = cols·Wᵀ as NN on a
		// transposed W, ∂W as NT on transposed dy and cols.
		{"1 channel (small K)", Shape{5, 4, 1}, 3, 2, true},
		// K ≥ 32: forward NT, ∂W = dyᵀ·cols as TN.
		{"4 channels (K = 36)", Shape{4, 5, 4}, 2, 3, false},
		// Same products with more filters than K, so ∂cols = dy·W (NN,
		// always) sums over the longer dimension.
		{"many filters (F = 40 > K)", Shape{3, 3, 4}, 40, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			c := newConv3x3[float64](tc.in, tc.filters, true, rng)
			if c.smallInner != tc.smallInner {
				t.Fatalf("smallInner = %v, want %v: the case no longer covers the GEMM forms it names", c.smallInner, tc.smallInner)
			}
			for i := range c.bias.W {
				c.bias.W[i] = rng.NormFloat64()
			}
			checkLayer(t, "conv", c, tc.n, rng, nil)
		})
	}
}

func TestConvWithoutInputGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := newConv3x3[float64](Shape{4, 4, 2}, 3, false, rng)
	x := randSlice(rng, 2*c.In().Size())
	c.Forward(x, 2, true)
	if dx := c.Backward(randSlice(rng, 2*c.Out().Size())); dx != nil {
		t.Fatalf("Backward returned ∂x for a layer built without input gradient")
	}
	checkLayer(t, "conv (no ∂x)", c, 2, rng, nil)
}

// TestConvMatchesDirect compares the im2col convolution with a direct
// 3×3 sum, so that a consistently wrong forward pass (which a gradient
// check would not notice) fails.
func TestConvMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	in := Shape{5, 6, 3}
	c := newConv3x3[float64](in, 4, true, rng)
	for i := range c.bias.W {
		c.bias.W[i] = rng.NormFloat64()
	}
	n := 2
	x := randSlice(rng, n*in.Size())
	y := c.Forward(x, n, false)
	for b := range n {
		for yy := range in.H {
			for xx := range in.W {
				for f := range 4 {
					want := c.bias.W[f]
					for ky := range 3 {
						for kx := range 3 {
							iy, ix := yy+ky-1, xx+kx-1
							if iy < 0 || iy >= in.H || ix < 0 || ix >= in.W {
								continue
							}
							for ch := range in.C {
								want += c.w.W[f*9*in.C+(ky*3+kx)*in.C+ch] * x[((b*in.H+iy)*in.W+ix)*in.C+ch]
							}
						}
					}
					got := y[((b*in.H+yy)*in.W+xx)*4+f]
					if math.Abs(got-want) > 1e-12 {
						t.Fatalf("y[%d,%d,%d,%d] = %v, direct sum %v", b, yy, xx, f, got, want)
					}
				}
			}
		}
	}
}

func TestReLUGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	checkLayer(t, "relu", newReLU[float64](Shape{3, 3, 2}), 3, rng, nil)
}

func TestTanhGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	checkLayer(t, "tanh", newTanh[float64](Shape{3, 3, 2}), 3, rng, nil)
}

func TestMaxPoolGradient(t *testing.T) {
	for _, s := range []Shape{{4, 4, 3}, {5, 7, 2}} { // odd sizes drop the last row/column
		rng := rand.New(rand.NewPCG(9, 10))
		p := newMaxPool2[float64](s)
		if got, want := p.Out(), (Shape{s.H / 2, s.W / 2, s.C}); got != want {
			t.Fatalf("out shape %+v, want %+v", got, want)
		}
		checkLayer(t, "maxpool", p, 2, rng, nil)
	}
}

func TestMaxPoolForward(t *testing.T) {
	p := newMaxPool2[float64](Shape{2, 4, 1})
	y := p.Forward([]float64{1, 5, 2, 0, 3, -1, 7, 4}, 1, false)
	if y[0] != 5 || y[1] != 7 {
		t.Fatalf("pool of [[1 5 2 0] [3 -1 7 4]] = %v, want [5 7]", y)
	}
}

func TestDenseGradient(t *testing.T) {
	// Backward always forms ∂W = dyᵀ·x as TN and ∂x = dy·W as NN; n = 3
	// is one GEMM tile, n = 70 spreads the products over several row tiles
	// of the driver (tileSizes).
	for _, n := range []int{3, 70} {
		rng := rand.New(rand.NewPCG(11, 12))
		d := newDense[float64](7, 5, true, rng)
		for i := range d.bias.W {
			d.bias.W[i] = rng.NormFloat64()
		}
		checkLayer(t, "dense", d, n, rng, nil)
	}
}

func TestDropoutGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	s := Shape{1, 1, 20}
	t.Run("eval mode is identity", func(t *testing.T) {
		d := newDropout[float64](s, 0.5, rand.New(rand.NewPCG(1, 1)))
		x := randSlice(rng, 2*s.Size())
		y := d.Forward(x, 2, false)
		for i := range x {
			if y[i] != x[i] {
				t.Fatalf("eval-mode dropout changed x[%d]: %v → %v", i, x[i], y[i])
			}
		}
		dy := randSlice(rng, len(x))
		dx := d.Backward(dy)
		for i := range dy {
			if dx[i] != dy[i] {
				t.Fatalf("eval-mode dropout backward changed dy[%d]", i)
			}
		}
	})
	t.Run("train mode with a replayed mask", func(t *testing.T) {
		d := newDropout[float64](s, 0.4, nil)
		reset := func() { d.rng = rand.New(rand.NewPCG(15, 16)) }
		checkLayer(t, "dropout", d, 3, rng, reset)
		kept := 0
		for _, m := range d.mask {
			switch m {
			case 0:
			case 1 / 0.6:
				kept++
			default:
				t.Fatalf("mask value %v, want 0 or 1/(1−p)", m)
			}
		}
		if kept == 0 || kept == len(d.mask) {
			t.Fatalf("mask kept %d of %d values", kept, len(d.mask))
		}
	})
}

func TestSoftmaxCrossEntropyGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	const n, k, scale = 4, 5, 0.25
	z := randSlice(rng, n*k)
	labels := []int{0, 4, 2, 2}
	grad := make([]float64, len(z))
	softmaxCrossEntropy(z, labels, k, scale, grad)
	num := make([]float64, len(z))
	for i := range z {
		num[i] = scale * centralDiff(&z[i], func() float64 { return softmaxCrossEntropy(z, labels, k, 1, nil) })
	}
	compareGrad(t, "softmax-CE ∂z", grad, num)

	// Value: uniform logits give log k per example; huge logits stay finite.
	if got := softmaxCrossEntropy(make([]float64, k), []int{3}, k, 1, nil); math.Abs(got-math.Log(k)) > 1e-15 {
		t.Errorf("loss of uniform logits = %v, want log %d", got, k)
	}
	if got := softmaxCrossEntropy([]float64{1000, 0}, []int{1}, 2, 1, nil); math.Abs(got-1000) > 1e-9 {
		t.Errorf("loss of logits (1000, 0) for class 1 = %v, want 1000", got)
	}
}

func TestL2Gradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	params := []*Param[float64]{
		{Name: "w", W: randSlice(rng, 6), G: make([]float64, 6), Decay: true},
		{Name: "b", W: randSlice(rng, 3), G: make([]float64, 3)},
	}
	const lambda = 0.3
	addL2Grad(params, lambda)
	for _, p := range params {
		num := make([]float64, len(p.W))
		for i := range p.W {
			num[i] = centralDiff(&p.W[i], func() float64 { return l2Penalty(params, lambda) })
		}
		compareGrad(t, "L2 ∂"+p.Name, p.G, num)
	}
	if params[1].G[0] != 0 {
		t.Errorf("L2 touched a bias (Decay false)")
	}
}

// TestNetGradient checks the whole network, including chunked mini-batches
// (m = 5 examples in chunks of 2), against central differences of the mean
// loss.
func TestNetGradient(t *testing.T) {
	for _, act := range []Activation{ReLUActivation, TanhActivation} {
		netGradient(t, act)
	}
}

func netGradient(t *testing.T, act Activation) {
	net, err := NewCNN[float64](Config{Input: Shape{6, 6, 2}, Classes: 3, Filters: 3, Dense: 4, Activation: act}, 21)
	if err != nil {
		t.Fatal(err)
	}
	net.Chunk = 2
	rng := rand.New(rand.NewPCG(22, 23))
	const m = 5
	x := randSlice(rng, m*net.in().Size())
	labels := []int{0, 2, 1, 1, 0}
	net.zeroGrad()
	net.gradient(x, labels, m)
	mean := func() float64 {
		var s float64
		for i := range m {
			logits := net.forward(x[i*net.in().Size():(i+1)*net.in().Size()], 1, true)
			s += softmaxCrossEntropy(logits, labels[i:i+1], 3, 1, nil)
		}
		return s / m
	}
	for _, p := range net.Params() {
		g := append([]float64(nil), p.G...)
		num := make([]float64, len(p.W))
		for i := range p.W {
			num[i] = centralDiff(&p.W[i], mean)
		}
		compareGrad(t, "net ∂"+p.Name, g, num)
	}
}

// TestFloat32Gradient runs the conv check in float32 with a tolerance
// matching its rounding (h = 1e-2, relative error ~1e-3), so the training
// precision is exercised too.
func TestFloat32Gradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 25))
	in := Shape{4, 4, 3}
	c := newConv3x3[float32](in, 5, true, rng)
	const n = 2
	x := make([]float32, n*in.Size())
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	r := make([]float32, n*c.Out().Size())
	for i := range r {
		r[i] = float32(rng.NormFloat64())
	}
	loss := func() float64 {
		var s float64
		for i, v := range c.Forward(x, n, true) {
			s += float64(v) * float64(r[i])
		}
		return s
	}
	c.Forward(x, n, true)
	dx := append([]float32(nil), c.Backward(r)...)
	const h = 1e-2
	for i := range x {
		old := x[i]
		x[i] = old + h
		up := loss()
		x[i] = old - h
		down := loss()
		x[i] = old
		num := (up - down) / (2 * h)
		if math.Abs(num-float64(dx[i])) > 2e-3*max(1, math.Abs(num)) {
			t.Fatalf("float32 conv ∂x[%d]: analytic %v, numeric %v", i, dx[i], num)
		}
	}
}
