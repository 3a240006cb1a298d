package reportingscript

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "reporting", MaxStep: 5, Params: []sdk.Param{
		{Name: "a", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "b", Kind: sdk.Float, Low: 0, High: 1},
	}}
}

// Evaluate reports a·k at steps k = 1…5 and stops when the host says so.
func Evaluate(ctx context.Context, x []float64) (float64, error) {
	var v float64
	for k := 1; k <= 5; k++ {
		v = x[0] * float64(k)
		prune, err := sdk.Report(ctx, k, v)
		if err != nil || prune {
			return v, err
		}
	}
	return v, nil
}
