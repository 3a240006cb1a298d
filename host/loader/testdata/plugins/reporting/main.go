// Command reporting is a test plugin whose evaluation reports a·k at
// steps k = 1…5 through sdk.Report and, when the host says stop, returns
// its last value at once.
package main

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

type reporting struct{}

func (reporting) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "reporting", MaxStep: 5, Params: []sdk.Param{
		{Name: "a", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "b", Kind: sdk.Float, Low: 0, High: 1},
	}}, nil
}

func (reporting) Evaluate(ctx context.Context, x []float64) (float64, error) {
	var v float64
	for k := 1; k <= 5; k++ {
		v = x[0] * float64(k)
		if prune, err := sdk.Report(ctx, k, v); err != nil || prune {
			return v, err
		}
	}
	return v, nil
}

func main() { sdk.ServeObjective(reporting{}) }
