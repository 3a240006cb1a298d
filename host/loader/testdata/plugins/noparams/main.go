// Command noparams declares a search space without parameters.
package main

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

type obj struct{}

func (obj) Info(context.Context) (sdk.Info, error) { return sdk.Info{Name: "empty"}, nil }

func (obj) Evaluate(context.Context, []float64) (float64, error) { return 0, nil }

func main() { sdk.ServeObjective(obj{}) }
