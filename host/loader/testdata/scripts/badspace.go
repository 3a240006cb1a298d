package bad

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

// Info declares a parameter whose bounds are the wrong way round.
func Info() sdk.Info {
	return sdk.Info{Params: []sdk.Param{
		{Name: "x", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "rate", Kind: sdk.Float, Low: 2, High: 1},
	}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) { return x[0], nil }
