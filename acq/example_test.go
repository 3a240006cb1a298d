package acq_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// A Func of a batch with its gradient: α(X) = −Σ (x − c)², maximal at c
// clipped to the box.
type bowl struct{ c []float64 }

func (b bowl) HasGradient() bool { return true }

func (b bowl) Eval(X, grad *mat.Dense) float64 {
	v := 0.0
	for i, c := range b.c {
		r := X.At(0, i) - c
		v -= r * r
		if grad != nil {
			grad.Set(0, i, -2*r)
		}
	}
	return v
}

// Maximize finds the maximizer of a function over the unit cube, here on
// the face x₁ = 1.
func ExampleMaximize() {
	X, v, err := acq.Maximize(context.Background(), bowl{c: []float64{0.25, 1.5}}, 1, 2,
		acq.OptimizeSettings{}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	fmt.Printf("x = (%.4f, %.4f), α = %.4f\n", X.At(0, 0), X.At(0, 1), v)
	// Output: x = (0.2500, 1.0000), α = -0.2500
}

// Lookup builds a registered acquisition; Propose returns the next batch.
func ExampleLookup() {
	X := mat.NewDense(4, 1, []float64{0.1, 0.4, 0.6, 0.9})
	y := []float64{-1, 0.5, 0.8, -0.7}
	g, err := gp.New(gp.NewSE([]float64{0.2}, 1), 1e-4, X, y)
	if err != nil {
		panic(err)
	}
	p, err := acq.Lookup("ei", acq.Options{})
	if err != nil {
		panic(err)
	}
	s := &acq.State{GP: g, Best: 0.8, Iter: 1, Rand: rand.New(rand.NewPCG(1, 1))}
	B, err := p.Propose(context.Background(), s, 1)
	if err != nil {
		panic(err)
	}
	r, c := B.Dims()
	fmt.Println(r, c, B.At(0, 0) > 0.4 && B.At(0, 0) < 0.9)
	fmt.Println(acq.Names())
	// Output:
	// 1 1 true
	// [bucb cei ei lp-ei mes nehvi parego pes pi qei qei-cl random ts ucb]
}
