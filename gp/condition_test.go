package gp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// genericCondition conditions the joint Gaussian of (f_X*, y_D, f_B), built
// from the full covariance, on (f_X*, y_D) with an explicit inverse and
// returns A, b, S of p(f_B | f_X*, y_D) = N(A f_X* + b, S) plus the
// posterior of f_X* given y_D.
func genericCondition(t *testing.T, g *GP, Xs, XB *mat.Dense) (A *mat.Dense, b []float64, S *mat.Dense, mS []float64, KS *mat.Dense) {
	t.Helper()
	s, d := Xs.Dims()
	q, _ := XB.Dims()
	n := g.N()
	all := mat.NewDense(s+n+q, d, nil)
	all.Slice(0, s, 0, d).(*mat.Dense).Copy(Xs)
	all.Slice(s, s+n, 0, d).(*mat.Dense).Copy(g.X())
	all.Slice(s+n, s+n+q, 0, d).(*mat.Dense).Copy(XB)
	C := CrossCov(g.Kernel(), all, all)
	for i := s; i < s+n; i++ {
		C.Set(i, i, C.At(i, i)+g.NoiseVar())
	}
	c := s + n
	Ccc := mat.DenseCopyOf(C.Slice(0, c, 0, c))
	var inv mat.Dense
	if err := inv.Inverse(Ccc); err != nil {
		t.Fatal(err)
	}
	Cbc := C.Slice(c, c+q, 0, c)
	var R mat.Dense // Σ_Bc Σ_cc⁻¹ (q×c)
	R.Mul(Cbc, &inv)
	A = mat.DenseCopyOf(R.Slice(0, q, 0, s))
	b = make([]float64, q)
	for i := 0; i < q; i++ {
		for j := 0; j < n; j++ {
			b[i] += R.At(i, s+j) * g.Y()[j]
		}
	}
	var RC mat.Dense
	RC.Mul(&R, Cbc.T())
	S = mat.DenseCopyOf(C.Slice(c, c+q, c, c+q))
	S.Sub(S, &RC)
	// p(f_X* | y_D).
	Cdd := mat.DenseCopyOf(C.Slice(s, s+n, s, s+n))
	var dinv mat.Dense
	if err := dinv.Inverse(Cdd); err != nil {
		t.Fatal(err)
	}
	Csd := C.Slice(0, s, s, s+n)
	var T mat.Dense
	T.Mul(Csd, &dinv)
	mS = make([]float64, s)
	for i := 0; i < s; i++ {
		for j := 0; j < n; j++ {
			mS[i] += T.At(i, j) * g.Y()[j]
		}
	}
	var TC mat.Dense
	TC.Mul(&T, Csd.T())
	KS = mat.DenseCopyOf(C.Slice(0, s, 0, s))
	KS.Sub(KS, &TC)
	return A, b, S, mS, KS
}

func TestConditionMatchesGeneric(t *testing.T) {
	rng := newRNG(31)
	for _, k := range kernels(2) {
		t.Run(kname(k), func(t *testing.T) {
			g := testProblem(t, k, 15, 0.03, 32)
			Xs := randDense(rng, 5, 2)
			XB := randDense(rng, 4, 2)
			c, err := g.Condition(Xs)
			if err != nil {
				t.Fatal(err)
			}
			if c.jitter() != 0 {
				t.Fatalf("unexpected jitter %g for well-separated X*", c.jitter())
			}
			wA, wb, wS, wm, wK := genericCondition(t, g, Xs, XB)
			A, b, S := c.Predict(XB)
			checkClose(t, "A", denseData(A), denseData(wA), 1e-8, 1e-10)
			checkClose(t, "b", b, wb, 1e-8, 1e-10)
			checkClose(t, "S", denseData(S), denseData(wS), 1e-8, 1e-10)
			m, K := c.Prior()
			checkClose(t, "prior mean", m, wm, 1e-9, 1e-11)
			checkClose(t, "prior cov", denseData(K), denseData(wK), 1e-9, 1e-11)
			// Appendix E for a single point: μ⁺ = aᵀ f + b with a = r_X*,
			// b = r_Dᵀ y, r = K₊⁻¹ k_tx; checked through a random f_X*.
			f := randVec(rng, 5)
			for i := 0; i < 4; i++ {
				var mu, want float64
				for j := 0; j < 5; j++ {
					mu += A.At(i, j) * f[j]
					want += wA.At(i, j) * f[j]
				}
				checkClose(t, "mu+", []float64{mu + b[i]}, []float64{want + wb[i]}, 1e-8, 1e-10)
			}
		})
	}
}

// Noise-free f at near-duplicate X* makes K̃ singular: jitter escalation
// must kick in, be reported, and give finite results; exact duplicates too.
func TestConditionNearDuplicates(t *testing.T) {
	g := testProblem(t, NewSE([]float64{0.3, 0.3}, 1), 10, 1e-4, 33)
	for _, eps := range []float64{0, 1e-9} {
		Xs := mat.NewDense(3, 2, []float64{0.4, 0.4, 0.4 + eps, 0.4, 0.9, 0.1})
		c, err := g.Condition(Xs)
		if err != nil {
			t.Fatalf("eps=%g: %v", eps, err)
		}
		if c.jitter() <= 0 || c.jitter() > maxJitter*1.0001 {
			t.Errorf("eps=%g: jitter %g, want in (0, %g]", eps, c.jitter(), maxJitter)
		}
		A, b, S := c.Predict(randDense(newRNG(34), 5, 2))
		for _, v := range append(append(denseData(A), b...), denseData(S)...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("eps=%g: non-finite prediction", eps)
			}
		}
		for i := 0; i < 5; i++ {
			if S.At(i, i) < 0 {
				t.Errorf("negative variance %g", S.At(i, i))
			}
		}
	}
}

func TestConditionErrors(t *testing.T) {
	g := testProblem(t, NewSE([]float64{0.3, 0.3}, 1), 5, 0.01, 35)
	if _, err := g.Condition(nil); err == nil {
		t.Error("nil X*: no error")
	}
	if _, err := g.Condition(mat.NewDense(1, 3, nil)); err == nil {
		t.Error("wrong dimension: no error")
	}
	if _, err := g.Condition(mat.NewDense(1, 2, []float64{math.NaN(), 0})); err == nil {
		t.Error("NaN X*: no error")
	}
}
