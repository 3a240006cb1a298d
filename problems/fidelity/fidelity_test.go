package fidelity

import (
	"context"
	"math"
	"testing"

	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/sdk"
)

// Values at stated points: BoTorch's listed optimizers of AugmentedBranin
// (x1 = π with x2 moving with the fidelity), Branin at s = 1, and
// AugmentedHartmann's minimum at s = 1 and its first term's weight at
// s = 0.
func TestValues(t *testing.T) {
	for _, c := range []struct {
		x1, x2, s, want, tol float64
	}{
		{-math.Pi, 12.275, 1, 0.397887, 1e-6},
		{math.Pi, 1.3867356039019576, 0.1, 0.397887, 1e-6},
		{math.Pi, 1.781519779945532, 0.5, 0.397887, 1e-6},
		{math.Pi, 2.1763039559891064, 0.9, 0.397887, 1e-6},
		{0, 0, 1, 36 + 10*(1-1/(8*math.Pi)) + 10, 1e-12},
		{10, 15, 0, math.Pow(15-(5.1/(4*math.Pi*math.Pi)-0.1)*100+50/math.Pi-6, 2) + 10*(1-1/(8*math.Pi))*math.Cos(10) + 10, 1e-9},
	} {
		if got := testfunc.AugmentedBranin(c.x1, c.x2, c.s); math.Abs(got-c.want) > c.tol {
			t.Errorf("AugmentedBranin(%v, %v, %v) = %v, want %v", c.x1, c.x2, c.s, got, c.want)
		}
	}
	xs := []float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}
	if got := testfunc.AugmentedHartmann(xs, 1); math.Abs(got-(-3.32237)) > 1e-5 {
		t.Errorf("AugmentedHartmann(x*, 1) = %v, want −3.32237", got)
	}
	h6 := testfunc.Hartmann6()
	for _, x := range [][]float64{xs, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, {0.1, 0.9, 0.3, 0.7, 0.2, 0.4}} {
		f, err := h6.Eval(x)
		if err != nil {
			t.Fatal(err)
		}
		if got := testfunc.AugmentedHartmann(x, 1); math.Abs(got+f) > 1e-12 {
			t.Errorf("AugmentedHartmann(%v, 1) = %v, want −Hartmann6 = %v", x, got, -f)
		}
		// s = 0 lowers α1 by 0.1: the value rises by 0.1·e^(−q1).
		q1 := 0.0
		a := []float64{10, 3, 17, 3.5, 1.7, 8}
		p := []float64{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886}
		for j := range x {
			q1 += a[j] * (x[j] - p[j]) * (x[j] - p[j])
		}
		if d := testfunc.AugmentedHartmann(x, 0) - testfunc.AugmentedHartmann(x, 1); math.Abs(d-0.1*math.Exp(-q1)) > 1e-12 {
			t.Errorf("AugmentedHartmann at s = 0 exceeds s = 1 by %v, want %v", d, 0.1*math.Exp(-q1))
		}
	}
}

// The declared optimum is the full-fidelity minimum: no point of a grid
// (Branin) or of random points (Hartmann) is below it, and the known
// minimizers reach it.
func TestOptimumAtFullFidelity(t *testing.T) {
	b, h := Problems()[0], Problems()[1]
	if r := b.Regret([]float64{math.Pi, 2.275}); math.Abs(r) > 1e-5 {
		t.Errorf("Branin regret at (π, 2.275) = %v", r)
	}
	for i := 0; i <= 150; i++ {
		for j := 0; j <= 150; j++ {
			x := []float64{-5 + 15*float64(i)/150, 15 * float64(j) / 150}
			if r := b.Regret(x); r < -1e-9 {
				t.Fatalf("Branin below its optimum at %v: regret %v", x, r)
			}
		}
	}
	if r := h.Regret([]float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}); math.Abs(r) > 1e-5 {
		t.Errorf("Hartmann regret at x* = %v", r)
	}
}

// An evaluation reports f(x, k/100) at every step and stops where it is
// told to, returning the value reached there.
func TestEvaluateReportsSteps(t *testing.T) {
	obj, err := New(Prefix + "augmented-branin")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := obj.Info(context.Background())
	if info.MaxStep != Steps || !info.Minimize || len(info.Params) != 2 {
		t.Fatalf("info %+v", info)
	}
	var got []float64
	r := reporter(func(step int, v float64) bool {
		got = append(got, v)
		return step >= 37
	})
	x := []float64{1, 2}
	v, err := obj.Evaluate(sdk.WithReporter(context.Background(), r), x)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 37 || v != got[36] || v != testfunc.AugmentedBranin(1, 2, 0.37) {
		t.Fatalf("%d reports, returned %v, want 37 and f(x, 0.37) = %v", len(got), v, testfunc.AugmentedBranin(1, 2, 0.37))
	}
	if _, err := New("mf/nope"); err == nil {
		t.Fatal("unknown problem accepted")
	}
}

type reporter func(step int, v float64) bool

func (r reporter) Report(step int, v float64) (bool, error) { return r(step, v), nil }
