package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// quadFunc is α(X) = −Σ_j Σ_i w_i (x_ji − c_ji)² with an optional gradient.
// Its maximizer over the box is c clipped to [0,1].
type quadFunc struct {
	c       *mat.Dense // q×d centres
	w       []float64
	noGrad  bool
	outside atomic.Int64 // evaluations at points outside the box
}

func (f *quadFunc) HasGradient() bool { return !f.noGrad }

func (f *quadFunc) Eval(X, grad *mat.Dense) float64 {
	q, d := X.Dims()
	v := 0.0
	for j := 0; j < q; j++ {
		for i := 0; i < d; i++ {
			x := X.At(j, i)
			if x < 0 || x > 1 {
				f.outside.Add(1)
			}
			r := x - f.c.At(j, i)
			v -= f.w[i] * r * r
			if grad != nil && !f.noGrad {
				grad.Set(j, i, -2*f.w[i]*r)
			}
		}
	}
	return v
}

// rosenFunc is the negated Rosenbrock function on u = 4x − 2 ∈ [−2,2]²,
// maximal (0) at x = (0.75, 0.75): a curved valley that needs curvature
// information to follow.
type rosenFunc struct{}

func (rosenFunc) HasGradient() bool { return true }

func (rosenFunc) Eval(X, grad *mat.Dense) float64 {
	u1, u2 := 4*X.At(0, 0)-2, 4*X.At(0, 1)-2
	a, b := 1-u1, u2-u1*u1
	if grad != nil {
		grad.Set(0, 0, -4*(-2*a-400*u1*b))
		grad.Set(0, 1, -4*(200*b))
	}
	return -(a*a + 100*b*b)
}

// peakFunc has a needle-thin peak at c that raw samples miss; a Starter
// points at it.
type peakFunc struct{ c []float64 }

func (f peakFunc) HasGradient() bool { return true }

func (f peakFunc) Eval(X, grad *mat.Dense) float64 {
	const w = 1e-3
	r2 := 0.0
	for i, c := range f.c {
		r := X.At(0, i) - c
		r2 += r * r
	}
	e := math.Exp(-r2 / (2 * w * w))
	if grad != nil {
		for i, c := range f.c {
			grad.Set(0, i, -e*(X.At(0, i)-c)/(w*w))
		}
	}
	return e
}

func (f peakFunc) Starts(q int) []*mat.Dense {
	x := append([]float64(nil), f.c...)
	x[0] += 2e-3
	return []*mat.Dense{mat.NewDense(1, len(x), x)}
}

func TestMaximizeQuadratic(t *testing.T) {
	tests := []struct {
		name   string
		q, d   int
		centre []float64
		noGrad bool
	}{
		{"interior", 1, 3, []float64{0.3, 0.7, 0.45}, false},
		{"face", 1, 3, []float64{1.4, 0.6, 0.2}, false},
		{"corner", 1, 2, []float64{-0.5, 1.7}, false},
		{"corner-fd", 1, 3, []float64{-0.3, 1.2, 0.5}, true},
		{"batch-mixed", 3, 2, []float64{0.2, 0.8, 1.5, 0.4, -1, -1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := make([]float64, tc.d)
			for i := range w {
				w[i] = float64(i + 1) // anisotropic
			}
			f := &quadFunc{c: mat.NewDense(tc.q, tc.d, tc.centre), w: w, noGrad: tc.noGrad}
			X, v, err := Maximize(context.Background(), f, tc.q, tc.d, OptimizeSettings{RawSamples: 64, Restarts: 3}, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			tol := 1e-5
			if tc.noGrad {
				tol = 1e-4
			}
			for j := 0; j < tc.q; j++ {
				for i := 0; i < tc.d; i++ {
					want := math.Min(math.Max(tc.centre[j*tc.d+i], 0), 1)
					if got := X.At(j, i); math.Abs(got-want) > tol {
						t.Errorf("x[%d][%d] = %v, want %v", j, i, got, want)
					}
				}
			}
			if n := f.outside.Load(); n != 0 {
				t.Errorf("%d evaluations outside the box", n)
			}
			if got := f.Eval(X, nil); got != v {
				t.Errorf("returned value %v, Eval gives %v", v, got)
			}
		})
	}
}

// TestProjectedLBFGSPoorStarts runs the local search alone from the corners of the
// box (far from the maximizer, across the valley) on Rosenbrock, and from a
// far corner on a problem whose maximizer is on a face.
func TestProjectedLBFGSPoorStarts(t *testing.T) {
	s := OptimizeSettings{MaxIter: 500, GradTol: 1e-9, FuncTol: 1e-15}.withDefaults()
	for _, x0 := range [][]float64{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0.1, 0.95}} {
		x := append([]float64(nil), x0...)
		p := newProblem(rosenFunc{}, 1, 2, s.FDStep)
		fx := projectedLBFGS(context.Background(), p, x, s)
		if math.Abs(x[0]-0.75) > 1e-4 || math.Abs(x[1]-0.75) > 1e-4 || fx > 1e-8 {
			t.Errorf("from %v: reached %v (−α = %g), want (0.75, 0.75); %d evaluations", x0, x, fx, p.evals)
		}
		t.Logf("from %v: %d evaluations", x0, p.evals)
	}
	// Maximizer on the face x_0 = 0 with strongly coupled coordinates:
	// α = −(x0 + 0.3)² − 10 (x1 − x0 − 0.5)², max over the box at (0, 0.5).
	coupled := funcOf(func(X, g *mat.Dense) float64 {
		x0, x1 := X.At(0, 0), X.At(0, 1)
		a, b := x0+0.3, x1-x0-0.5
		if g != nil {
			g.Set(0, 0, -2*a+20*b)
			g.Set(0, 1, -20*b)
		}
		return -a*a - 10*b*b
	})
	x := []float64{1, 0}
	projectedLBFGS(context.Background(), newProblem(coupled, 1, 2, s.FDStep), x, s)
	if math.Abs(x[0]) > 1e-8 || math.Abs(x[1]-0.5) > 1e-6 {
		t.Errorf("coupled face problem: reached %v, want (0, 0.5)", x)
	}
}

// funcOf adapts a closure with gradient to a Differentiable Func.
type funcOf func(X, g *mat.Dense) float64

func (f funcOf) Eval(X, g *mat.Dense) float64 { return f(X, g) }
func (f funcOf) HasGradient() bool            { return true }

func TestMaximizeUsesStarts(t *testing.T) {
	f := peakFunc{c: []float64{0.123, 0.877}}
	X, v, err := Maximize(context.Background(), f, 1, 2, OptimizeSettings{RawSamples: 32, Restarts: 2}, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if v < 1-1e-8 || math.Abs(X.At(0, 0)-0.123) > 1e-5 || math.Abs(X.At(0, 1)-0.877) > 1e-5 {
		t.Errorf("got %v with value %v, want the peak at %v", mat.Formatted(X), v, f.c)
	}
}

func TestMaximizeDeterministicAcrossWorkers(t *testing.T) {
	// A multimodal function: the restart that wins must not depend on
	// scheduling.
	f := funcOf(func(X, g *mat.Dense) float64 {
		v := 0.0
		q, d := X.Dims()
		for j := 0; j < q; j++ {
			for i := 0; i < d; i++ {
				x := X.At(j, i)
				v += math.Sin(13*x+float64(i)) * x
				if g != nil {
					g.Set(j, i, 13*math.Cos(13*x+float64(i))*x+math.Sin(13*x+float64(i)))
				}
			}
		}
		return v
	})
	var ref *mat.Dense
	for _, w := range []int{1, 2, 5} {
		X, _, err := Maximize(context.Background(), f, 2, 3, OptimizeSettings{RawSamples: 100, Restarts: 6, Workers: w}, rand.New(rand.NewPCG(9, 9)))
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = X
		} else if !mat.Equal(ref, X) {
			t.Errorf("workers=%d gives %v, workers=1 gives %v", w, mat.Formatted(X), mat.Formatted(ref))
		}
	}
}

// noisyQuad is a Stochastic Func: EvalSample adds zero-mean noise to the
// gradient of a quadratic, as a Monte-Carlo estimate would.
type noisyQuad struct{ quadFunc }

func (f *noisyQuad) EvalSample(X, grad *mat.Dense, rng *rand.Rand) float64 {
	v := f.quadFunc.Eval(X, grad)
	if grad != nil {
		r, c := grad.Dims()
		for j := 0; j < r; j++ {
			for i := 0; i < c; i++ {
				grad.Set(j, i, grad.At(j, i)+0.3*rng.NormFloat64())
			}
		}
	}
	return v + 0.01*rng.NormFloat64()
}

func TestMaximizeAdam(t *testing.T) {
	f := &noisyQuad{quadFunc{c: mat.NewDense(1, 3, []float64{0.35, 1.3, -0.2}), w: []float64{1, 1, 1}}}
	X, _, err := Maximize(context.Background(), f, 1, 3, OptimizeSettings{Method: methodAdam, RawSamples: 16, Restarts: 2, AdamIters: 600}, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.35, 1, 0}
	for i, w := range want {
		// Adam with a constant step hovers within a few step sizes.
		if math.Abs(X.At(0, i)-w) > 0.05 {
			t.Errorf("x[%d] = %v, want %v ± 0.05", i, X.At(0, i), w)
		}
	}
	if n := f.outside.Load(); n != 0 {
		t.Errorf("%d evaluations outside the box", n)
	}
}

func TestMaximizeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &quadFunc{c: mat.NewDense(1, 2, []float64{0.5, 0.5}), w: []float64{1, 1}}
	if _, _, err := Maximize(ctx, f, 1, 2, OptimizeSettings{}, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("no error from a cancelled context")
	}
}

// bowlLog is α(x) = −log(1 + (x − c)ᵀA(x − c)) for one point, with A
// symmetric positive definite (diagonally dominant). It counts evaluations
// outside the unit cube.
type bowlLog struct {
	c       []float64
	a       *mat.SymDense
	outside atomic.Int64
}

func (f *bowlLog) HasGradient() bool { return true }

func (f *bowlLog) Eval(X, grad *mat.Dense) float64 {
	d := len(f.c)
	r := mat.NewVecDense(d, nil)
	for i := range f.c {
		x := X.At(0, i)
		if x < 0 || x > 1 {
			f.outside.Add(1)
		}
		r.SetVec(i, x-f.c[i])
	}
	var ar mat.VecDense
	ar.MulVec(f.a, r)
	qf := mat.Dot(r, &ar)
	if grad != nil {
		for i := 0; i < d; i++ {
			grad.Set(0, i, -2*ar.AtVec(i)/(1+qf))
		}
	}
	return -math.Log(1 + qf)
}

// TestProjectedLBFGSCornerFromOppositeCorner runs the projected L-BFGS search
// alone from a corner of the box on a coupled, non-quadratic function
// whose constrained maximum is the opposite corner: the unconstrained
// maximizer c lies 0.5 beyond that corner in every coordinate, and A's
// diagonal dominance makes ∇α point out of the box there (the KKT
// conditions of a corner maximum). The search must end exactly on the
// corner (projection puts variables on the bounds), never evaluate outside
// the box, and report −α(corner).
func TestProjectedLBFGSCornerFromOppositeCorner(t *testing.T) {
	s := OptimizeSettings{}.withDefaults()
	for _, corner := range [][]float64{
		{1, 1, 1},
		{0, 0, 0},
		{1, 0, 1},
		{0, 1, 1, 0, 1},
	} {
		d := len(corner)
		c := make([]float64, d)
		x := make([]float64, d)
		for i, v := range corner {
			c[i] = v + 0.5*(2*v-1) // 0.5 outside the box beyond the corner
			x[i] = 1 - v           // start at the opposite corner
		}
		a := mat.NewSymDense(d, nil)
		for i := 0; i < d; i++ {
			a.SetSym(i, i, 2+0.5*float64(i))
			for j := i + 1; j < d; j++ {
				a.SetSym(i, j, 0.3*math.Pow(-1, float64(i+j)))
			}
		}
		f := &bowlLog{c: c, a: a}
		p := newProblem(f, 1, d, s.FDStep)
		fx := projectedLBFGS(context.Background(), p, x, s)
		for i := range x {
			if x[i] != corner[i] {
				t.Errorf("corner %v: reached %v", corner, x)
				break
			}
		}
		if want := -f.Eval(mat.NewDense(1, d, corner), nil); fx != want {
			t.Errorf("corner %v: final value %v, want −α(corner) = %v", corner, fx, want)
		}
		if n := f.outside.Load(); n != 0 {
			t.Errorf("corner %v: %d evaluations outside the box", corner, n)
		}
		t.Logf("corner %v: %d evaluations", corner, p.evals)
	}
}
