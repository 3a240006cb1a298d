// An objective script: the 6-d Hartmann function, interpreted by Yaegi.
// Drop this file into a plugins directory and run
//
//	tesbo-host run --objective hartmann6 --plugins DIR
//
// A script defines Info and Evaluate in any package; it may import the
// sdk and a restricted standard library (math, sort, strings, ...).
package scripts

import (
	"context"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

// Info declares the space [0,1]^6; Hartmann-6 is minimized, with minimum
// −3.32237 at (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573).
func Info() sdk.Info {
	params := make([]sdk.Param, 6)
	for i := range params {
		params[i] = sdk.Param{Name: "x" + string(rune('1'+i)), Kind: sdk.Float, Low: 0, High: 1}
	}
	opt := -3.32237
	return sdk.Info{Name: "hartmann6", Params: params, Minimize: true, Optimum: &opt}
}

var (
	alpha = [4]float64{1.0, 1.2, 3.0, 3.2}
	a     = [4][6]float64{
		{10, 3, 17, 3.5, 1.7, 8},
		{0.05, 10, 17, 0.1, 8, 14},
		{3, 3.5, 1.7, 10, 17, 8},
		{17, 8, 0.05, 10, 0.1, 14},
	}
	p = [4][6]float64{
		{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
		{0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
		{0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
		{0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381},
	}
)

// Evaluate returns f(x) = −Σ_i α_i exp(−Σ_j A_ij (x_j − P_ij)²).
func Evaluate(ctx context.Context, x []float64) (float64, error) {
	f := 0.0
	for i := 0; i < 4; i++ {
		s := 0.0
		for j := 0; j < 6; j++ {
			d := x[j] - p[i][j]
			s += a[i][j] * d * d
		}
		f -= alpha[i] * math.Exp(-s)
	}
	return f, nil
}
