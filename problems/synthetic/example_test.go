package synthetic_test

import (
	"context"
	"fmt"

	"github.com/tesbo/tesbo/problems/synthetic"
)

// Configure an objective the way the host does (its --param pairs plus the
// reserved noise_var and seed), then evaluate with and without noise.
func Example() {
	ctx := context.Background()
	o, err := synthetic.New("styblinskitang")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := o.Configure(ctx, map[string]string{"dim": "3", "noise_var": "1e-4", "seed": "1"}); err != nil {
		fmt.Println(err)
		return
	}
	info, _ := o.Info(ctx)
	fmt.Printf("%s: %d parameters on [%g, %g], f* = %.4f\n",
		info.Name, info.Dim(), info.Params[0].Low, info.Params[0].High, *info.Optimum)

	x := []float64{-2.9, -2.9, -2.9}
	f, _ := o.EvaluateNoiseFree(ctx, x)
	y1, _ := o.Evaluate(ctx, x)
	y2, _ := o.Evaluate(ctx, x)
	fmt.Printf("f(x) = %.4f; noisy y is reproducible: %v\n", f, y1 == y2)

	err = o.Configure(ctx, map[string]string{"dimension": "3"})
	fmt.Println(err)
	// Output:
	// synthetic/styblinskitang: 3 parameters on [-5, 5], f* = 117.4985
	// f(x) = 117.4978; noisy y is reproducible: true
	// synthetic/styblinskitang: unknown parameter "dimension"; this objective accepts dim, noise_var, seed
}
