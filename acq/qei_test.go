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
	fq, err := QEI{Samples: 1}.Prepare(ctx, s, 1)
	if err != nil {
		t.Fatal(err)
	}
	mc, se := qeiEstimate(fq.(*qeiFunc), X, 40000, rand.New(rand.NewPCG(1, 1)))
	fe, _ := EI{}.Prepare(ctx, s, 1)
	ei := math.Exp(fe.Eval(X, nil))
	if math.Abs(mc-ei) > 4*se {
		t.Errorf("qEI(|B|=1) = %v ± %v, analytic EI %v", mc, se, ei)
	}
	// The QMC fixed-sample version is much closer than plain MC error.
	fqmc, _ := QEI{Samples: 4096}.Prepare(ctx, s, 1)
	if v := fqmc.Eval(X, nil); math.Abs(v-ei) > 4*se {
		t.Errorf("QMC qEI(|B|=1) = %v, analytic EI %v", v, ei)
	}
}

func TestQEIPermutationInvariant(t *testing.T) {
	s := testState(t, 10, 2, 5)
	ctx := context.Background()
	X := mat.NewDense(3, 2, []float64{0.45, 0.3, 0.9, 0.8, 0.1, 0.55})
	P := mat.NewDense(3, 2, []float64{0.1, 0.55, 0.45, 0.3, 0.9, 0.8})
	f, _ := QEI{Samples: 1}.Prepare(ctx, s, 3)
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
	g, _ := QEI{Samples: 8192}.Prepare(ctx, s, 3)
	if va, vb := g.Eval(X, nil), g.Eval(P, nil); math.Abs(va-vb) > 4*math.Hypot(sa, sb) {
		t.Errorf("fixed-sample qEI: %v vs %v", va, vb)
	}
}

func TestQEIGradient(t *testing.T) {
	s := testState(t, 12, 2, 6)
	ctx := context.Background()
	s.Pending = mat.NewDense(1, 2, []float64{0.5, 0.5})
	f, _ := QEI{Samples: 256}.Prepare(ctx, s, 3)
	X := mat.NewDense(3, 2, []float64{0.45, 0.31, 0.92, 0.8, 0.12, 0.55})
	// The SAA estimate is piecewise smooth (the argmax of a sample can
	// switch), so use a small step.
	checkGrad(t, "qei", f, X, 1e-7, 1e-4)
}

func TestCholBackward(t *testing.T) {
	// loss(Σ) = Σ_ij W_ij L_ij with L = chol(Σ); check ∂loss/∂Σ against
	// symmetric finite differences.
	const n = 4
	rng := rand.New(rand.NewPCG(7, 7))
	B := make([]float64, n*n)
	for i := range B {
		B[i] = rng.NormFloat64()
	}
	S := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for k := 0; k < n; k++ {
				S[i*n+j] += B[i*n+k] * B[j*n+k]
			}
			if i == j {
				S[i*n+j] += 1
			}
		}
	}
	W := make([]float64, n*n)
	for i := range W {
		W[i] = rng.NormFloat64()
	}
	loss := func(S []float64) float64 {
		l := make([]float64, n*n)
		if !cholesky(l, S, n, 0) {
			t.Fatal("not PD")
		}
		v := 0.0
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v += W[i*n+j] * l[i*n+j]
			}
		}
		return v
	}
	l := make([]float64, n*n)
	cholesky(l, S, n, 0)
	G := cholBackward(l, W, n)
	h := 1e-6
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			Sp := append([]float64(nil), S...)
			Sm := append([]float64(nil), S...)
			Sp[i*n+j] += h
			Sp[j*n+i] = Sp[i*n+j]
			Sm[i*n+j] -= h
			Sm[j*n+i] = Sm[i*n+j]
			fd := (loss(Sp) - loss(Sm)) / (2 * h)
			want := G[i*n+j]
			if i != j {
				want += G[j*n+i] // a symmetric perturbation moves both entries
			}
			if math.Abs(fd-want) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("∂/∂Σ[%d][%d]: %v, finite difference %v", i, j, want, fd)
			}
		}
	}
}
