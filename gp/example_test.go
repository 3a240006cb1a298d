package gp_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tesbo/tesbo/gp"
	"gonum.org/v1/gonum/mat"
)

// Fit a GP to five nearly noise-free observations of a 1-d function on the unit
// interval (standardized outputs), then query the posterior, condition on
// noise-free values at a candidate maximizer set X* (Appendix C) and draw a
// whole-function sample.
func Example() {
	X := mat.NewDense(5, 1, []float64{0.05, 0.3, 0.5, 0.7, 0.95})
	y := make([]float64, 5)
	for i := range y {
		y[i] = math.Sin(6 * X.At(i, 0))
	}
	g, err := gp.New(gp.NewSE([]float64{0.2}, 1), 1e-4, X, y)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, v := g.MeanVar([]float64{0.4})
	fmt.Printf("f(0.4) ~ N(%.3f, %.4f); true %.3f\n", m, v, math.Sin(2.4))

	c, err := g.Condition(mat.NewDense(2, 1, []float64{0.25, 0.6}))
	if err != nil {
		fmt.Println(err)
		return
	}
	A, b, S := c.Predict(mat.NewDense(1, 1, []float64{0.4}))
	mS, _ := c.Prior() // posterior mean of f(X*) given y
	fmt.Printf("given f(X*) = its posterior mean: f(0.4) has mean %.3f, variance %.5f\n",
		A.At(0, 0)*mS[0]+A.At(0, 1)*mS[1]+b[0], S.At(0, 0))

	paths, err := g.SamplePaths(rand.New(rand.NewPCG(1, 2)), 1, 500)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("a sample path at a data point: %.2f (y = %.2f)\n", paths[0].Eval([]float64{0.5}), y[2])

	fit, err := gp.Fit(X, y, gp.FitSettings{FixedNoise: 1e-4})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("fitted length-scale %.2f\n", math.Exp(fit.Kernel().Params()[0]))
	// Output:
	// f(0.4) ~ N(0.720, 0.0110); true 0.675
	// given f(X*) = its posterior mean: f(0.4) has mean 0.720, variance 0.00040
	// a sample path at a data point: 0.13 (y = 0.14)
	// fitted length-scale 0.25
}
