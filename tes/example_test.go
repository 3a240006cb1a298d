package tes_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/tes"
)

// Example builds the TES_ep model of one BO iteration (Remark 2: X*,
// p(x*|y_D), EP) and evaluates the batch acquisition α(B) at a batch drawn
// from its own suggested starts.
func Example() {
	X := mat.NewDense(4, 1, []float64{0.1, 0.4, 0.6, 0.9})
	g, err := gp.New(gp.NewSE([]float64{0.2}, 1), 1e-3, X, []float64{0.1, 0.8, 0.5, -0.3})
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := tes.NewModel(context.Background(), g, rng, 5, nil, tes.Settings{Method: tes.EP})
	if err != nil {
		panic(err)
	}
	f, err := m.Func(2, nil, rng)
	if err != nil {
		panic(err)
	}
	alpha, _, err := f.Estimate(f.Starts(2)[0])
	if err != nil {
		panic(err)
	}
	fmt.Println("0 ≤ α ≤ H(x*):", alpha >= 0 && alpha <= m.Entropy())
	// Output: 0 ≤ α ≤ H(x*): true
}

// ExampleBatchSizeDiagnostic prints the maximized information gain for
// batch sizes 1..3 (Appendix G): it grows with B while the gain per
// evaluation falls.
func ExampleBatchSizeDiagnostic() {
	X := mat.NewDense(5, 1, []float64{0.05, 0.3, 0.5, 0.7, 0.95})
	g, err := gp.New(gp.NewSE([]float64{0.15}, 1), 1e-3, X, []float64{0.1, 0.9, 0.4, 0.8, -0.2})
	if err != nil {
		panic(err)
	}
	st := &acq.State{GP: g, Rand: rand.New(rand.NewPCG(3, 4)), Iter: 1}
	rows, _, err := tes.BatchSizeDiagnostic(context.Background(), st, 3, tes.Settings{}, acq.OptimizeSettings{})
	if err != nil {
		panic(err)
	}
	fmt.Println("grows:", rows[1].Alpha > rows[0].Alpha && rows[2].Alpha > rows[1].Alpha-3*rows[2].SE)
	fmt.Println("per point falls:", rows[2].PerPoint < rows[0].PerPoint)
	// Output:
	// grows: true
	// per point falls: true
}
