// Command hang ignores its context and never answers when x[0] = 13.
package main

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

type obj struct{}

func (obj) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Params: []sdk.Param{{Name: "x", Low: -20, High: 20}}}, nil
}

func (obj) Evaluate(_ context.Context, x []float64) (float64, error) {
	if x[0] == 13 {
		select {} // blocks forever, ignoring ctx
	}
	return -x[0], nil
}

func main() { sdk.ServeObjective(obj{}) }
