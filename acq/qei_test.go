package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// qeiEstimate returns the plain Monte-Carlo qEI estimate with n fresh
// samples and its standard error.
func qeiEstimate(f *qeiFunc, X *mat.Dense, n int, rng *rand.Rand) (mean, se float64) {
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = f.EvalSample(X, nil, rng) // one sample each
	}
	for _, v := range vals {
		mean += v
	}
	mean /= float64(n)
	for _, v := range vals {
		se += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(se / float64(n-1) / float64(n))
}

func TestQEISingleMatchesEI(t *testing.T) {
	s := testState(t, 10, 2, 4)
	ctx := context.Background()
	X := mat.NewDense(1, 2, []float64{0.45, 0.3})
	fq, err := qei{Samples: 1}.Prepare(ctx, s, 1)
	if err != nil {
		t.Fatal(err)
	}
	mc, se := qeiEstimate(fq.(*qeiFunc), X, 40000, rand.New(rand.NewPCG(1, 1)))
	fe, _ := ei{}.Prepare(ctx, s, 1)
	ei := math.Exp(fe.Eval(X, nil))
	if math.Abs(mc-ei) > 4*se {
		t.Errorf("qEI(|B|=1) = %v ± %v, analytic EI %v", mc, se, ei)
	}
	// The QMC fixed-sample version is much closer than plain MC error.
	fqmc, _ := qei{Samples: 4096}.Prepare(ctx, s, 1)
	if v := fqmc.Eval(X, nil); math.Abs(v-ei) > 4*se {
		t.Errorf("QMC qEI(|B|=1) = %v, analytic EI %v", v, ei)
	}
}

func TestQEIPermutationInvariant(t *testing.T) {
	s := testState(t, 10, 2, 5)
	ctx := context.Background()
	X := mat.NewDense(3, 2, []float64{0.45, 0.3, 0.9, 0.8, 0.1, 0.55})
	P := mat.NewDense(3, 2, []float64{0.1, 0.55, 0.45, 0.3, 0.9, 0.8})
	f, _ := qei{Samples: 1}.Prepare(ctx, s, 3)
	qf := f.(*qeiFunc)
	// The reparameterization with a Cholesky factor is not exactly
	// permutation-equivariant for a fixed sample, so invariance holds up to
	// Monte-Carlo error: independent estimates agree within their errors.
	a, sa := qeiEstimate(qf, X, 30000, rand.New(rand.NewPCG(2, 2)))
	b, sb := qeiEstimate(qf, P, 30000, rand.New(rand.NewPCG(3, 3)))
	if math.Abs(a-b) > 4*math.Hypot(sa, sb) {
		t.Errorf("qEI(X) = %v ± %v but qEI(PX) = %v ± %v", a, sa, b, sb)
	}
	// With the same fixed QMC base samples the two orders also agree to
	// within the (much smaller) QMC error.
	g, _ := qei{Samples: 8192}.Prepare(ctx, s, 3)
	if va, vb := g.Eval(X, nil), g.Eval(P, nil); math.Abs(va-vb) > 4*math.Hypot(sa, sb) {
		t.Errorf("fixed-sample qEI: %v vs %v", va, vb)
	}
}

func TestQEIGradient(t *testing.T) {
	s := testState(t, 12, 2, 6)
	ctx := context.Background()
	s.Pending = mat.NewDense(1, 2, []float64{0.5, 0.5})
	f, _ := qei{Samples: 256}.Prepare(ctx, s, 3)
	X := mat.NewDense(3, 2, []float64{0.45, 0.31, 0.92, 0.8, 0.12, 0.55})
	// The SAA estimate is piecewise smooth (the argmax of a sample can
	// switch), so use a small step.
	checkGrad(t, "qei", f, X, 1e-7, 1e-4)
}

// TestQEISampleGradient checks the gradient that the stochastic (Adam) mode
// follows, EvalSample's, against central differences of EvalSample with the
// same fresh samples, with a pending point in the joint distribution.
func TestQEISampleGradient(t *testing.T) {
	s := testState(t, 12, 2, 6)
	s.Pending = mat.NewDense(1, 2, []float64{0.5, 0.5})
	f, err := qei{Samples: 256}.Prepare(context.Background(), s, 3)
	if err != nil {
		t.Fatal(err)
	}
	X := mat.NewDense(3, 2, []float64{0.45, 0.31, 0.92, 0.8, 0.12, 0.55})
	for _, seed := range []uint64{1, 2} {
		// EvalSample with the same random stream at every call: the same
		// fresh samples each time, so a deterministic function of X.
		sf := funcOf(func(X, g *mat.Dense) float64 {
			return f.(Stochastic).EvalSample(X, g, rand.New(rand.NewPCG(seed, 1)))
		})
		if sf.Eval(X, nil) == f.Eval(X, nil) {
			t.Fatal("EvalSample gave the fixed-sample value: it did not draw fresh samples")
		}
		checkGrad(t, "qei EvalSample", sf, X, 1e-7, 1e-4)
	}
}

// TestStochasticOptionSelectsAdam checks that Options.Stochastic reaches
// the inner optimizer through Lookup (Method Adam for qei, L-BFGS-B
// without it) and that qEI then proposes end to end: a batch of the
// requested size in the box whose qEI, estimated with 8192 fixed QMC
// samples, is at least 90% of the L-BFGS-B proposal's.
func TestStochasticOptionSelectsAdam(t *testing.T) {
	set := OptimizeSettings{RawSamples: 64, Restarts: 2, AdamIters: 150, Workers: 1}
	propose := func(stochastic bool) *mat.Dense {
		p, err := Lookup("qei", Options{Stochastic: stochastic, MCSamples: 128, Optimize: set})
		if err != nil {
			t.Fatal(err)
		}
		want := methodLBFGS
		if stochastic {
			want = methodAdam
		}
		if got := p.(Optimized).Settings.Method; got != want {
			t.Fatalf("Stochastic=%v: optimizer method %v, want %v", stochastic, got, want)
		}
		B, err := p.Propose(context.Background(), testState(t, 12, 2, 9), 3)
		if err != nil {
			t.Fatal(err)
		}
		if r, c := B.Dims(); r != 3 || c != 2 {
			t.Fatalf("Stochastic=%v: batch is %d×%d, want 3×2", stochastic, r, c)
		}
		for _, v := range B.RawMatrix().Data {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("Stochastic=%v: batch %v leaves the unit square", stochastic, mat.Formatted(B))
			}
		}
		return B
	}
	adamB, lbfgsB := propose(true), propose(false)
	ref, err := qei{Samples: 8192}.Prepare(context.Background(), testState(t, 12, 2, 9), 3)
	if err != nil {
		t.Fatal(err)
	}
	va, vl := ref.Eval(adamB, nil), ref.Eval(lbfgsB, nil)
	t.Logf("qEI of the Adam batch %.4g, of the L-BFGS-B batch %.4g", va, vl)
	if !(va >= 0.9*vl) {
		t.Errorf("Adam batch has qEI %.4g, under 90%% of L-BFGS-B's %.4g", va, vl)
	}
}
