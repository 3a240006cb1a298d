package gp

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func nan() float64 { return math.NaN() }

func allFinite(t *testing.T, name string, v ...float64) {
	t.Helper()
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("%s: value %d is %v", name, i, x)
		}
	}
}

// Duplicate inputs: fine with noise; noise-free they make K singular and
// jitter escalation gives a usable posterior (documented fallback), with the
// jitter reported.
func TestDuplicatePoints(t *testing.T) {
	X := mat.NewDense(5, 2, []float64{0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.7, 0.1, 0.4, 0.9})
	y := []float64{1, 1.1, 0.9, -1, 0.5}
	k := NewSE([]float64{0.3, 0.3}, 1)
	for _, noise := range []float64{0.01, 0} {
		g, err := New(k, noise, X, y)
		if err != nil {
			t.Fatalf("noise %g: %v", noise, err)
		}
		if (noise == 0) != (g.Jitter() > 0) {
			t.Errorf("noise %g: jitter %g", noise, g.Jitter())
		}
		m, v := g.MeanVar([]float64{0.2, 0.2})
		allFinite(t, "duplicates", m, v, g.logMarginalLikelihood())
		if v < 0 {
			t.Errorf("negative variance %g", v)
		}
		if noise == 0 && math.Abs(m-1) > 1e-3 {
			t.Errorf("noise-free duplicate mean %g, want ≈ mean of the duplicates' y = 1", m)
		}
		dm, dv := make([]float64, 2), make([]float64, 2)
		g.MeanVarGrad([]float64{0.3, 0.25}, dm, dv)
		allFinite(t, "grad", append(dm, dv...)...)
	}
}

// Variances at training inputs of a noise-free model are ≈ 0 and clamped,
// never negative.
func TestVarianceClamped(t *testing.T) {
	g := testProblem(t, NewSE([]float64{0.5, 0.5}, 1), 30, 0, 71)
	v := make([]float64, 30)
	g.Predict(g.X(), nil, v)
	for i, x := range v {
		if x < 0 || x > 1e-3 {
			t.Errorf("variance at training input %d = %g, want in [0, 1e-3]", i, x)
		}
	}
	_, c := g.Joint(g.X())
	for i := 0; i < 30; i++ {
		if c.At(i, i) < 0 {
			t.Errorf("Joint diagonal %d = %g < 0", i, c.At(i, i))
		}
	}
}

func TestSinglePoint(t *testing.T) {
	g, err := New(NewMatern52([]float64{0.3}, 1), 0.1, mat.NewDense(1, 1, []float64{0.5}), []float64{2})
	if err != nil {
		t.Fatal(err)
	}
	m, v := g.MeanVar([]float64{0.5})
	// Closed form: m = k/(k+σ²)·y, v = k − k²/(k+σ²).
	checkClose(t, "n=1", []float64{m, v}, []float64{2 / 1.1, 1 - 1/1.1}, 1e-12, 0)
}

func TestBadInputs(t *testing.T) {
	k := NewSE([]float64{0.3, 0.3}, 1)
	X := mat.NewDense(2, 2, []float64{0.1, 0.2, 0.3, 0.4})
	cases := map[string]func() error{
		"nil kernel":  func() error { _, err := New(nil, 0.1, X, []float64{1, 2}); return err },
		"nil X":       func() error { _, err := New(k, 0.1, nil, nil); return err },
		"dim":         func() error { _, err := New(NewSE([]float64{1}, 1), 0.1, X, []float64{1, 2}); return err },
		"len":         func() error { _, err := New(k, 0.1, X, []float64{1}); return err },
		"NaN y":       func() error { _, err := New(k, 0.1, X, []float64{1, nan()}); return err },
		"Inf y":       func() error { _, err := New(k, 0.1, X, []float64{1, math.Inf(-1)}); return err },
		"NaN X":       func() error { _, err := New(k, 0.1, mat.NewDense(1, 2, []float64{nan(), 0}), []float64{1}); return err },
		"neg noise":   func() error { _, err := New(k, -0.1, X, []float64{1, 2}); return err },
		"NaN noise":   func() error { _, err := New(k, nan(), X, []float64{1, 2}); return err },
		"NaN params":  func() error { _, err := New(k.WithParams([]float64{nan(), 0, 0}), 0.1, X, []float64{1, 2}); return err },
		"tiny length": func() error { _, err := New(k.WithParams([]float64{-800, 0, 0}), 0.1, X, []float64{1, 2}); return err },
		"zero var":    func() error { _, err := New(k.WithParams([]float64{0, 0, -800}), 0.1, X, []float64{1, 2}); return err },
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, errBadInput) {
			t.Errorf("%s: err = %v, want ErrBadInput", name, err)
		}
	}
}

// A kernel so extreme that K+σ²I cannot be factorized must give
// errNotPositiveDefinite, not a panic or NaN.
type brokenKernel struct{ Kernel }

func (brokenKernel) Eval(x, y []float64) float64 { return -1 }

func TestIndefiniteError(t *testing.T) {
	X := mat.NewDense(3, 1, []float64{0.1, 0.5, 0.9})
	_, err := New(brokenKernel{NewSE([]float64{1}, 1)}, 0, X, []float64{1, 2, 3})
	if !errors.Is(err, errNotPositiveDefinite) {
		t.Fatalf("err = %v, want ErrNotPositiveDefinite", err)
	}
}

// nanParamGrad is a valid kernel for the posterior whose hyper-parameter
// derivatives are NaN (a broken user kernel): the gradient must come back as
// an error, not as NaN or silently zeroed entries.
type nanParamGrad struct{ Kernel }

func (nanParamGrad) ParamGrad(dst, x, y []float64) float64 {
	for i := range dst {
		dst[i] = math.NaN()
	}
	return math.NaN()
}

func TestLMLGradError(t *testing.T) {
	g := testProblem(t, nanParamGrad{NewSE([]float64{0.3, 0.3}, 1)}, 6, 0.01, 72)
	grad, err := g.logMarginalLikelihoodGrad()
	if err == nil {
		t.Fatalf("no error; gradient %v", grad)
	}
	if grad != nil {
		t.Errorf("gradient %v returned with error %v", grad, err)
	}
}

// NewSE and NewMatern52 refuse hyper-parameters that would make Eval NaN.
func TestKernelConstructorsPanic(t *testing.T) {
	ctors := map[string]func([]float64, float64) Kernel{
		"SE":       func(l []float64, v float64) Kernel { return NewSE(l, v) },
		"Matern52": func(l []float64, v float64) Kernel { return NewMatern52(l, v) },
	}
	bad := map[string]struct {
		l []float64
		v float64
	}{
		"zero length":     {[]float64{0.3, 0}, 1},
		"negative length": {[]float64{-0.3, 0.3}, 1},
		"NaN length":      {[]float64{nan(), 0.3}, 1},
		"Inf length":      {[]float64{math.Inf(1), 0.3}, 1},
		"tiny length":     {[]float64{1e-200, 0.3}, 1},
		"zero variance":   {[]float64{0.3, 0.3}, 0},
		"neg variance":    {[]float64{0.3, 0.3}, -1},
		"NaN variance":    {[]float64{0.3, 0.3}, nan()},
		"Inf variance":    {[]float64{0.3, 0.3}, math.Inf(1)},
		"no dimensions":   {nil, 1},
	}
	for cn, ctor := range ctors {
		for bn, b := range bad {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s %s: no panic", cn, bn)
					}
				}()
				ctor(b.l, b.v)
			}()
		}
		// Valid extremes stay valid and finite.
		k := ctor([]float64{1e-100, 1e100}, 1e-300)
		if err := checkKernel(k); err != nil {
			t.Errorf("%s extreme but valid: %v", cn, err)
		}
		allFinite(t, cn+" extreme Eval", k.Eval([]float64{0.1, 0.2}, []float64{0.1, 0.7}), k.Eval([]float64{0.1, 0.2}, []float64{0.1, 0.2}))
	}
}

// checkKernel on kernels from WithParams (which accepts anything of the
// right length), and the entry points that take a kernel.
func TestCheckKernel(t *testing.T) {
	X := mat.NewDense(2, 2, []float64{0.1, 0.2, 0.3, 0.4})
	for _, k := range kernels(2) {
		if err := checkKernel(k); err != nil {
			t.Errorf("%s: valid kernel rejected: %v", kname(k), err)
		}
		for name, p := range map[string][]float64{
			"NaN":            {nan(), 0, 0},
			"-Inf":           {math.Inf(-1), 0, 0},
			"1/ℓ² overflow":  {-400, 0, 0},
			"σ² overflow":    {0, 0, 800},
			"σ² underflow":   {0, 0, -800},
			"NaN variance":   {0, 0, nan()},
			"Inf log length": {math.Inf(1), 0, 0},
		} {
			kb := k.WithParams(p)
			err := checkKernel(kb)
			if !errors.Is(err, errBadInput) {
				t.Errorf("%s %s: CheckKernel = %v, want ErrBadInput", kname(k), name, err)
				continue
			}
			if _, err := New(kb, 0.1, X, []float64{1, 2}); !errors.Is(err, errBadInput) {
				t.Errorf("%s %s: New err = %v", kname(k), name, err)
			}
			if _, err := Fit(X, []float64{1, 2}, FitSettings{Kernel: kb}); !errors.Is(err, errBadInput) {
				t.Errorf("%s %s: Fit err = %v", kname(k), name, err)
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s %s: CrossCov did not panic", kname(k), name)
					}
				}()
				CrossCov(kb, X, X)
			}()
		}
	}
	if err := checkKernel(nil); !errors.Is(err, errBadInput) {
		t.Errorf("nil kernel: %v", err)
	}
}

// All-zero outputs (a constant objective after standardization): New's
// documented behaviour is α = 0, mean 0, the data-independent variances of
// any other y at the same inputs, LML = −½ log|K+σ²I| − (n/2) log 2π, and a
// finite gradient; with or without noise (noise-free takes jitter).
func TestNewZeroOutputs(t *testing.T) {
	X := randDense(newRNG(73), 8, 2)
	zero := make([]float64, 8)
	other := randVec(newRNG(74), 8)
	Q := randDense(newRNG(75), 5, 2)
	for _, k := range kernels(2) {
		for _, noise := range []float64{0.01, 0} {
			g, err := New(k, noise, X, zero)
			if err != nil {
				t.Fatalf("%s noise %g: %v", kname(k), noise, err)
			}
			ref, err := New(k, noise, X, other)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, "α", g.Alpha(), make([]float64, 8), 0, 0)
			m, v := make([]float64, 5), make([]float64, 5)
			g.Predict(Q, m, v)
			rm, rv := make([]float64, 5), make([]float64, 5)
			ref.Predict(Q, rm, rv)
			checkClose(t, "mean", m, make([]float64, 5), 0, 0)
			checkClose(t, "variance", v, rv, 0, 0)
			wantLML := -0.5*ref.chol.logDet() - 4*math.Log(2*math.Pi)
			checkClose(t, "LML", []float64{g.logMarginalLikelihood()}, []float64{wantLML}, 1e-14, 0)
			grad, err := g.logMarginalLikelihoodGrad()
			if err != nil {
				t.Fatal(err)
			}
			allFinite(t, kname(k)+" zero-y LML gradient", grad...)
		}
	}
}
