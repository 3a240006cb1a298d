package testfunc_test

import (
	"fmt"

	"github.com/tesbo/tesbo/problems/testfunc"
)

// Evaluate a benchmark at its maximizer, observe it with the paper's noise,
// and score a recommendation by its immediate regret.
func Example() {
	fn := testfunc.Branin() // negated Branin on [0,1]², maximization form
	xstar := fn.Maximizers[0]
	v, _ := fn.Eval(xstar)
	fmt.Printf("%s: f(x*) = %.6f = f* = %.6f\n", fn.Name, v, fn.Optimum)

	// A noisy observation: f(x) + √σ²·z with z fixed by (seed, x).
	y1, _ := fn.Observe(xstar, fn.NoiseVar, 7)
	y2, _ := fn.Observe(xstar, fn.NoiseVar, 7)
	fmt.Println("reproducible noise:", y1 == y2)

	r, _ := fn.Regret([]float64{0.5, 0.5})
	fmt.Printf("regret at the centre: %.4f\n", r)
	// Output:
	// branin: f(x*) = -0.397887 = f* = -0.397887
	// reproducible noise: true
	// regret at the centre: 23.7321
}

// Functions of any dimension come from New with Settings, the way the
// synthetic plugin builds them from --param dim=5.
func ExampleNew() {
	fn, err := testfunc.New("michalewicz", testfunc.Settings{Dim: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s in %d dimensions: f* = %.6f\n", fn.Name, fn.Dim, fn.Optimum)
	_, err = testfunc.New("branin", testfunc.Settings{Dim: 3})
	fmt.Println(err)
	// Output:
	// michalewicz in 5 dimensions: f* = 4.687658
	// branin is 2-dimensional; omit dim or set it to 2
}
