// Command nan returns NaN for x[0] < 0 and +Inf for x[0] > 0.
package main

import (
	"context"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

type obj struct{}

func (obj) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Params: []sdk.Param{{Name: "x", Low: -1, High: 1}}}, nil
}

func (obj) Evaluate(_ context.Context, x []float64) (float64, error) {
	switch {
	case x[0] < 0:
		return math.NaN(), nil
	case x[0] > 0:
		return math.Inf(1), nil
	}
	return 0, nil
}

func main() { sdk.ServeObjective(obj{}) }
