package bad

import (
	"context"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Params: []sdk.Param{{Name: "x", Kind: sdk.Float, Low: -1, High: 1}}}
}

// Evaluate is log(x): NaN below 0, −Inf at 0.
func Evaluate(ctx context.Context, x []float64) (float64, error) { return math.Log(x[0]), nil }
