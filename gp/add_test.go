package gp

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Add must equal New on the concatenated data (factor, α, LML, posterior),
// leave the original unchanged, and work for k = 1 and k > 1.
func TestAddMatchesNew(t *testing.T) {
	for _, k := range kernels(2) {
		g := testProblem(t, k, 20, 0.02, 61)
		rng := newRNG(62)
		for _, kk := range []int{1, 4} {
			Xn := randDense(rng, kk, 2)
			yn := randVec(rng, kk)
			before := append([]float64(nil), g.Alpha()...)
			ga, err := g.Add(Xn, yn)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, "original α unchanged", g.Alpha(), before, 0, 0)
			Xall := mat.NewDense(20+kk, 2, nil)
			Xall.Stack(g.X(), Xn)
			gn, err := New(k, 0.02, Xall, append(append([]float64(nil), g.Y()...), yn...))
			if err != nil {
				t.Fatal(err)
			}
			if ga.N() != 20+kk {
				t.Fatalf("N = %d", ga.N())
			}
			checkClose(t, "factor", ga.chol.l, gn.chol.l, 1e-9, 1e-12)
			checkClose(t, "alpha", ga.Alpha(), gn.Alpha(), 1e-8, 1e-10)
			checkClose(t, "lml", []float64{ga.logMarginalLikelihood()}, []float64{gn.logMarginalLikelihood()}, 1e-10, 1e-10)
			Q := randDense(rng, 6, 2)
			am, av := make([]float64, 6), make([]float64, 6)
			nm, nv := make([]float64, 6), make([]float64, 6)
			ga.Predict(Q, am, av)
			gn.Predict(Q, nm, nv)
			checkClose(t, "mean", am, nm, 1e-9, 1e-12)
			checkClose(t, "var", av, nv, 1e-8, 1e-12)
		}
	}
}

// Fantasizing at an existing input of a noise-free model: the Schur block is
// singular, so Add falls back to a full refactorization with jitter.
func TestAddDuplicateNoiseFree(t *testing.T) {
	g := testProblem(t, NewSE([]float64{0.3, 0.3}, 1), 8, 0, 63)
	x := mat.NewDense(1, 2, append([]float64(nil), g.X().RawRowView(2)...))
	ga, err := g.Add(x, []float64{g.Y()[2]})
	if err != nil {
		t.Fatal(err)
	}
	if ga.Jitter() <= 0 {
		t.Errorf("jitter %g, want > 0 after a noise-free duplicate", ga.Jitter())
	}
	m, v := ga.MeanVar([]float64{0.5, 0.5})
	if m != m || v != v {
		t.Fatal("NaN after fallback")
	}
}

func TestAddErrors(t *testing.T) {
	g := testProblem(t, NewSE([]float64{0.3, 0.3}, 1), 4, 0.01, 64)
	if _, err := g.Add(mat.NewDense(1, 3, nil), []float64{0}); !errors.Is(err, errBadInput) {
		t.Errorf("wrong dim: %v", err)
	}
	if _, err := g.Add(mat.NewDense(2, 2, nil), []float64{0}); !errors.Is(err, errBadInput) {
		t.Errorf("len mismatch: %v", err)
	}
	if _, err := g.Add(mat.NewDense(1, 2, nil), []float64{nan()}); !errors.Is(err, errBadInput) {
		t.Errorf("NaN y: %v", err)
	}
}

// Non-finite inputs are rejected, not factorized into NaN.
func TestAddNonFiniteX(t *testing.T) {
	g := testProblem(t, NewSE([]float64{0.3, 0.3}, 1), 4, 0.01, 65)
	for _, v := range []float64{nan(), math.Inf(1), math.Inf(-1)} {
		X := mat.NewDense(2, 2, []float64{0.5, 0.5, 0.2, v})
		ga, err := g.Add(X, []float64{0.1, 0.2})
		if !errors.Is(err, errBadInput) || ga != nil {
			t.Errorf("X with %v: got %v, %v; want ErrBadInput", v, ga, err)
		}
	}
}
