package quadscript

import (
	"context"
	"strings"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: strings.ToUpper("quad"), Params: []sdk.Param{
		{Name: "a", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "b", Kind: sdk.LogFloat, Low: 0.01, High: 1},
	}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	return -(x[0]-0.3)*(x[0]-0.3) - (x[1]-0.7)*(x[1]-0.7), nil
}
