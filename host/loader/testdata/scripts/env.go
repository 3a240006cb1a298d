package envscript

import (
	"context"
	"os"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Params: []sdk.Param{{Name: "which", Kind: sdk.Int, Low: 0, High: 1}}}
}

// Evaluate returns 1 if the variable selected by x[0] is set.
func Evaluate(ctx context.Context, x []float64) (float64, error) {
	name := "TESBO_TEST_PLAIN"
	if x[0] == 1 {
		name = "TESBO_TEST_API_TOKEN"
	}
	if os.Getenv(name) != "" {
		return 1, nil
	}
	return 0, nil
}
