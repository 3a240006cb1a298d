package acq

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// paregoFunc's analytic gradient (log EI plus the constraints' log
// probabilities of feasibility) agrees with central finite differences.
func TestParegoGradient(t *testing.T) {
	g, c := fixtureGP(t, 12, 3, 1), fixtureGP(t, 12, 3, 2)
	f := paregoFunc(g, maxY(g), []*gp.GP{c}, []float64{0.3})
	for _, x := range [][]float64{{0.2, 0.5, 0.7}, {0.9, 0.1, 0.4}, {0.5, 0.5, 0.5}} {
		checkGrad(t, "parego", f, mat.NewDense(1, 3, x), 1e-6, 1e-4)
	}
	f.improve = false // nothing feasible yet: the feasibility term alone
	checkGrad(t, "parego feasibility", f, mat.NewDense(1, 3, []float64{0.3, 0.6, 0.2}), 1e-6, 1e-4)
}

// The augmented Chebyshev scalarization: with λ = (1, 0) the best point
// is the one best on the first objective, and an infeasible point is no
// incumbent.
func TestParegoScalarize(t *testing.T) {
	s := &MultiState{Y: mat.NewDense(3, 3, []float64{
		1, 0, 1, // best on objective 0, feasible
		0, 1, 1, // best on objective 1
		2, 2, -1, // dominates both, infeasible
	})}
	y, best := scalarize(s, []int{0, 1}, []int{2}, []float64{1, 0})
	if !(y[0] > y[1]) || best != y[0] {
		t.Fatalf("scalarized %v, best %v", y, best)
	}
	if y, best := scalarize(s, []int{0, 1}, []int{2}, []float64{0, 1}); !(y[1] > y[0]) || best != y[1] || !(y[2] > best) {
		t.Fatalf("λ = (0, 1): scalarized %v, best %v", y, best)
	}
}

// ProposeMulti returns q distinct points in the unit cube, the same for
// the same Rand.
func TestParegoProposeMulti(t *testing.T) {
	o1, o2 := fixtureGP(t, 10, 2, 3), fixtureGP(t, 10, 2, 4)
	id := func(v float64) float64 { return v }
	state := func() *MultiState {
		n, _ := o1.X().Dims()
		Y := mat.NewDense(n, 2, nil)
		for i := range n {
			Y.Set(i, 0, o1.Y()[i])
			Y.Set(i, 1, o2.Y()[i])
		}
		return &MultiState{X: o1.X(), Y: Y, Rand: rand.New(rand.NewPCG(5, 5)), Outputs: []Output{
			{Name: "a", Kind: Objective, GP: o1, ToValue: id, ToModel: id},
			{Name: "b", Kind: Objective, GP: o2, ToValue: id, ToModel: id}}}
	}
	p := parego{settings: OptimizeSettings{RawSamples: 64, Restarts: 2}}
	X, err := p.ProposeMulti(context.Background(), state(), 3)
	if err != nil {
		t.Fatal(err)
	}
	Y, _ := p.ProposeMulti(context.Background(), state(), 3)
	if r, c := X.Dims(); r != 3 || c != 2 || !mat.Equal(X, Y) {
		t.Fatalf("batch %v, again %v", mat.Formatted(X), mat.Formatted(Y))
	}
	for _, v := range X.RawMatrix().Data {
		if v < 0 || v > 1 {
			t.Fatalf("batch %v outside the cube", mat.Formatted(X))
		}
	}
}
