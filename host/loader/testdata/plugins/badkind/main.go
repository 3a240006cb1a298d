// Command badkind declares a malformed search space.
package main

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

type obj struct{}

func (obj) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Params: []sdk.Param{{Name: "depth", Kind: sdk.ParamKind(7), Low: 1, High: 4}}}, nil
}

func (obj) Evaluate(context.Context, []float64) (float64, error) { return 0, nil }

func main() { sdk.ServeObjective(obj{}) }
