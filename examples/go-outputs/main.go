// Command go-outputs is a complete tesbo objective plugin with several
// outputs: two objectives to minimize, cost and loss, which pull x0 apart
// (cost is best at x0 = 0.2, loss at x0 = 0.8), and a constraint, budget =
// x0 + x1 ≤ 1.2. tesbo-host finds the Pareto set of cost and loss among the
// points within budget. Put this directory into a plugins directory:
//
//	cp -r examples/go-outputs plugins/tradeoff
//	tesbo-host run --objective tradeoff --iters 10
//
// A single objective with constraints is declared the same way, with one
// sdk.Maximize or sdk.Minimize output.
package main

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

type tradeoff struct{}

func (tradeoff) Info(context.Context) (sdk.Info, error) {
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
	}, nil
}

// EvaluateOutputs returns cost, loss and budget, in Info.Outputs' order.
func (tradeoff) EvaluateOutputs(_ context.Context, x []float64) ([]float64, error) {
	cost := (x[0]-0.2)*(x[0]-0.2) + (x[1]-0.5)*(x[1]-0.5)
	loss := (x[0]-0.8)*(x[0]-0.8) + (x[1]-0.5)*(x[1]-0.5)
	return []float64{cost, loss, x[0] + x[1]}, nil
}

// Evaluate is never called for an objective with Outputs; sdk.Objective
// needs it.
func (t tradeoff) Evaluate(ctx context.Context, x []float64) (float64, error) {
	out, err := t.EvaluateOutputs(ctx, x)
	if err != nil {
		return 0, err
	}
	return out[0], nil
}

func main() { sdk.ServeObjective(tradeoff{}) }
