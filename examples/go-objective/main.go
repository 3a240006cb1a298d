// Command go-objective is a complete tesbo objective plugin: the 2-d
// Rosenbrock function, minimized (minimum 0 at (1, 1)). Put this directory
// (or the binary `go build` makes of it) into a plugins directory:
//
//	cp -r examples/go-objective plugins/rosenbrock
//	tesbo-host run --objective rosenbrock --acq random --iters 10
//
// A directory inside a Go module is built by the host on first use; one
// outside this repository needs its own module requiring
// github.com/tesbo/tesbo (sdk/README.md, "A plugin outside this
// repository": go mod init, then a replace directive to your checkout).
package main

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

type rosenbrock struct{}

func (rosenbrock) Info(context.Context) (sdk.Info, error) {
	optimum := 0.0
	return sdk.Info{
		Name: "rosenbrock",
		Params: []sdk.Param{
			{Name: "x", Kind: sdk.Float, Low: -2, High: 2},
			{Name: "y", Kind: sdk.Float, Low: -1, High: 3},
		},
		Minimize: true,
		Optimum:  &optimum,
	}, nil
}

func (rosenbrock) Evaluate(_ context.Context, x []float64) (float64, error) {
	a, b := 1-x[0], x[1]-x[0]*x[0]
	return a*a + 100*b*b, nil
}

func main() { sdk.ServeObjective(rosenbrock{}) }
