package bad

import (
	"context"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{
		Params: []sdk.Param{{Name: "x", Kind: sdk.Float, Low: -1, High: 1}},
		Outputs: []sdk.Output{
			{Name: "cost", Goal: sdk.Minimize},
			{Name: "loss", Goal: sdk.Minimize},
		},
	}
}

// EvaluateOutputs returns one value too few below 0, a NaN loss above 0.5
// and (x, 1 − x) otherwise.
func EvaluateOutputs(ctx context.Context, x []float64) ([]float64, error) {
	switch {
	case x[0] < 0:
		return []float64{x[0]}, nil
	case x[0] > 0.5:
		return []float64{x[0], math.NaN()}, nil
	}
	return []float64{x[0], 1 - x[0]}, nil
}
