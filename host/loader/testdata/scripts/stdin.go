package stdinscript

import (
	"context"
	"fmt"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "stdin", Params: []sdk.Param{{Name: "a", Kind: sdk.Float, Low: 0, High: 1}}}
}

// Evaluate reads a line from its standard input: a restricted script must
// see none of the host's.
func Evaluate(ctx context.Context, x []float64) (float64, error) {
	var s string
	if _, err := fmt.Scanln(&s); err != nil {
		return 0, err
	}
	return float64(len(s)), nil
}
