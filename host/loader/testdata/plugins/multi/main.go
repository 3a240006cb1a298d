// Command multi serves two objectives from one process (sdk.ServeObjectives).
package main

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

type lin struct {
	name  string
	slope float64
}

func (l lin) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: l.name, Params: []sdk.Param{{Name: "x", Kind: sdk.Float, Low: -1, High: 1}}}, nil
}

func (l lin) Evaluate(_ context.Context, x []float64) (float64, error) { return l.slope * x[0], nil }

func main() {
	sdk.ServeObjectives(map[string]sdk.Objective{
		"multi/up":   lin{"up", 2},
		"multi/down": lin{"down", -3},
	})
}
