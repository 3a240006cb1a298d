// Command badbounds declares a malformed search space.
package main

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

type obj struct{}

func (obj) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Params: []sdk.Param{{Name: "lr", Kind: sdk.Float, Low: 1, High: 1}}}, nil
}

func (obj) Evaluate(context.Context, []float64) (float64, error) { return 0, nil }

func main() { sdk.ServeObjective(obj{}) }
