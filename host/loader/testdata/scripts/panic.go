package bad

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info { return sdk.Info{Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	if x[0] > 0.5 {
		panic("script boom")
	}
	return x[0], nil
}
