package bad

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info { return sdk.Info{Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	s := 0.0
	for x[0] > 0.5 { // never ends
		s += x[0]
	}
	return s + x[0], nil
}
