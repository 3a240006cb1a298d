package host_test

import (
	"context"
	"fmt"
	"math"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// quadratic is a user's objective: maximize −(lr−0.3)² − (layers−4)²/100
// over a learning rate in [0, 1] and an integer number of layers in [1, 8].
type quadratic struct{}

func (quadratic) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "quadratic", Params: []sdk.Param{
		{Name: "lr", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "layers", Kind: sdk.Int, Low: 1, High: 8},
	}}, nil
}

func (quadratic) Evaluate(_ context.Context, x []float64) (float64, error) {
	return -(x[0]-0.3)*(x[0]-0.3) - (x[1]-4)*(x[1]-4)/100, nil
}

// Optimize runs a whole study in-process: the host evaluates the objective
// (here in batches of 2, in parallel) and returns the recommendation.
func ExampleOptimize() {
	res, err := host.Optimize(context.Background(), quadratic{}, host.Options{
		Acquisition: "ei",
		Batch:       2,
		Iters:       10,
		Init:        4,
		Seed:        1,
		OnIteration: func(r host.Record) {
			// r is the --json record of the iteration.
		},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("evaluations:", res.Evaluations)
	fmt.Println("lr within 0.1 of 0.3:", math.Abs(res.Best.X[0]-0.3) < 0.1)
	fmt.Println("layers within 1 of 4:", math.Abs(res.Best.X[1]-4) <= 1)
	// Output:
	// evaluations: 24
	// lr within 0.1 of 0.3: true
	// layers within 1 of 4: true
}

// A Study driven by Ask and Tell lets the caller evaluate the points itself
// (on its own cluster, say). The trials are the same as Optimize's with the
// same seed.
func ExampleStudy_Ask() {
	ctx := context.Background()
	info, _ := quadratic{}.Info(ctx)
	study, err := host.NewStudy(ctx, info, host.Options{Acquisition: "ei", Init: 3, Seed: 7})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for range 8 {
		// Ask(ctx, 0) returns the rest of the initial design first, then
		// one batch per call.
		trials, err := study.Ask(ctx, 0)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		for _, t := range trials {
			v, err := quadratic{}.Evaluate(ctx, t.X) // t.X is in native units
			study.Tell(t.ID, v, err)
		}
	}
	best, _ := study.Recommend(ctx)
	fmt.Println("trials:", len(study.Trials()))
	fmt.Println("best was evaluated:", best.TrialID >= 0)
	// Output:
	// trials: 10
	// best was evaluated: true
}
