// An objective script with several outputs, interpreted by Yaegi: two
// objectives to minimize, cost and loss, and a constraint, budget = x0 + x1
// ≤ 1.2 (the function of examples/go-outputs). Drop this file into a
// plugins directory and run
//
//	tesbo-host run --objective tradeoff --plugins DIR
//
// A script of several outputs defines Info (with Outputs) and
// EvaluateOutputs instead of Evaluate.
package tradeoff

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

// Info declares the space [0,1]² and the three outputs.
func Info() sdk.Info {
	return sdk.Info{
		Name: "tradeoff",
		Params: []sdk.Param{
			{Name: "x0", Kind: sdk.Float, Low: 0, High: 1},
			{Name: "x1", Kind: sdk.Float, Low: 0, High: 1},
		},
		Outputs: []sdk.Output{
			{Name: "cost", Goal: sdk.Minimize},
			{Name: "loss", Goal: sdk.Minimize},
			{Name: "budget", Goal: sdk.Constraint, Feasible: sdk.AtMost, Bound: sdk.Bound(1.2)},
		},
	}
}

// EvaluateOutputs returns cost, loss and budget, in Info.Outputs' order.
func EvaluateOutputs(_ context.Context, x []float64) ([]float64, error) {
	cost := (x[0]-0.2)*(x[0]-0.2) + (x[1]-0.5)*(x[1]-0.5)
	loss := (x[0]-0.8)*(x[0]-0.8) + (x[1]-0.5)*(x[1]-0.5)
	return []float64{cost, loss, x[0] + x[1]}, nil
}
