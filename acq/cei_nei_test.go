package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// The noisy form's analytic gradient against central finite differences,
// on a 2-d constrained state (so both coordinates and a mixture of
// fantasies enter).
func TestCEINoisyGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	X := mat.NewDense(12, 2, nil)
	for i := 0; i < 12; i++ {
		X.Set(i, 0, rng.Float64())
		X.Set(i, 1, rng.Float64())
	}
	s := multiFixture(t, X, []OutputKind{Objective, Constraint}, []func(x []float64) float64{
		func(x []float64) float64 { return x[0] + 0.5*x[1] + 0.01*rng.NormFloat64() },
		func(x []float64) float64 { return 1.1 - x[0] - x[1] + 0.01*rng.NormFloat64() },
	}, 3)
	obj, con, thr := kindsOf(s)
	gps := []*gp.GP{s.Outputs[0].GP, s.Outputs[1].GP}
	fant, err := neiDraw(s, gps, obj[0], con, thr)
	if err != nil || fant == nil {
		t.Fatalf("fantasies %v, %v", fant, err)
	}
	f := &ceiFunc{gps: gps, obj: obj[0], con: con, thr: thr, fant: fant, improve: true}
	for _, x0 := range [][]float64{{0.3, 0.4}, {0.55, 0.5}, {0.8, 0.1}} {
		X := mat.NewDense(1, 2, append([]float64(nil), x0...))
		g := mat.NewDense(1, 2, nil)
		f.Eval(X, g)
		for j := 0; j < 2; j++ {
			const h = 1e-6
			xp, xm := append([]float64(nil), x0...), append([]float64(nil), x0...)
			xp[j] += h
			xm[j] -= h
			fd := (f.Eval(mat.NewDense(1, 2, xp), nil) - f.Eval(mat.NewDense(1, 2, xm), nil)) / (2 * h)
			if math.Abs(fd-g.At(0, j)) > 1e-4+1e-3*math.Abs(fd) {
				t.Errorf("x = %v: ∂α/∂x%d = %v, FD %v", x0, j, g.At(0, j), fd)
			}
		}
	}
}

// The failure the noisy form mends: the objective rises with x and the
// constraint holds for x ≤ 0.5, observed with noise. Points just past the
// bound (0.51, 0.53) happened to look feasible, and the noise-free form
// takes the better of them as its incumbent: EI is positive only beyond
// them, and cei proposed further into the infeasible region. Under the
// fantasies the incumbent is mostly a truly feasible point, and cei
// proposes below the bound.
func TestCEINoisyStaysFeasible(t *testing.T) {
	xs := []float64{0.05, 0.2, 0.35, 0.45, 0.51, 0.53, 0.7, 0.9}
	noise := []float64{0, 0, 0, 0, 0.02, 0.035, 0, 0} // the constraint's observation noise
	X := mat.NewDense(len(xs), 1, xs)
	fy, cy := make([]float64, len(xs)), make([]float64, len(xs))
	Y := mat.NewDense(len(xs), 2, nil)
	for i, x := range xs {
		fy[i], cy[i] = x, 0.5-x+noise[i]
		Y.Set(i, 0, fy[i])
		Y.Set(i, 1, cy[i])
	}
	gf, err := gp.New(gp.NewSE([]float64{0.5}, 1), 1e-6, X, fy)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := gp.New(gp.NewSE([]float64{0.5}, 0.1), 4e-4, X, cy)
	if err != nil {
		t.Fatal(err)
	}
	id := func(v float64) float64 { return v }
	s := &MultiState{
		Outputs: []Output{{Name: "f", Kind: Objective, GP: gf, ToValue: id, ToModel: id},
			{Name: "c", Kind: Constraint, GP: gc, ToValue: id, ToModel: id}},
		X: X, Y: Y, Rand: rand.New(rand.NewPCG(1, 2)), Iter: 1, Evaluated: len(xs),
	}
	if mu, _ := gc.MeanVar([]float64{0.53}); mu >= 0 {
		t.Fatalf("fixture: the constraint's mean at 0.53 is %v, want it infeasible", mu)
	}
	p, err := Lookup("cei", Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := p.(MultiProposer).ProposeMulti(context.Background(), s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := x.At(0, 0); got > 0.5 || got < 0.45 {
		t.Errorf("cei proposed x = %.4f, want it in [0.45, 0.5]: past the bound the constraint breaks", got)
	}
}
