package host_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"

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
			study.Tell(ctx, t.ID, v, err)
		}
	}
	best, _ := study.Recommend(ctx)
	fmt.Println("trials:", len(study.Trials()))
	fmt.Println("best was evaluated:", best.TrialID >= 0)
	// Output:
	// trials: 10
	// best was evaluated: true
}

// Trial.Params gives a trial's point by parameter name.
func ExampleTrial_Params() {
	ctx := context.Background()
	info, _ := quadratic{}.Info(ctx)
	study, _ := host.NewStudy(ctx, info, host.Options{Init: 1, Seed: 3})
	trials, _ := study.Ask(ctx, 0)
	p := trials[0].Params()
	fmt.Println(len(p), p["lr"] >= 0 && p["lr"] <= 1, p["layers"] == math.Round(p["layers"]))
	// Output:
	// 2 true true
}

// Attach adds results evaluated outside the study (an earlier experiment,
// a colleague's run): the GP uses them from the next Ask on.
func ExampleStudy_Attach() {
	ctx := context.Background()
	info, _ := quadratic{}.Info(ctx)
	study, _ := host.NewStudy(ctx, info, host.Options{Acquisition: "ei", NoInit: true, Iters: 3, Seed: 5})
	for _, x := range [][]float64{{0.1, 2}, {0.5, 6}, {0.3, 3}} {
		v, _ := quadratic{}.Evaluate(ctx, x)
		if _, err := study.Attach(ctx, x, v); err != nil {
			fmt.Println("error:", err)
			return
		}
	}
	best, _ := study.Recommend(ctx)
	fmt.Println("best so far:", best.X)
	// Output:
	// best so far: [0.3 3]
}

// Enqueue has a given point (a known good configuration, say) evaluated
// next: Ask returns it before any point of its own.
func ExampleStudy_Enqueue() {
	ctx := context.Background()
	info, _ := quadratic{}.Info(ctx)
	study, _ := host.NewStudy(ctx, info, host.Options{Init: 2, Seed: 5})
	if _, err := study.Enqueue(ctx, []float64{0.3, 4}); err != nil {
		fmt.Println("error:", err)
		return
	}
	trials, _ := study.Ask(ctx, 0)
	fmt.Println(len(trials), trials[0].X, trials[0].Iteration == host.ExternalIteration)
	trials, _ = study.Ask(ctx, 0) // then the initial design
	fmt.Println(len(trials), trials[0].Iteration)
	// Output:
	// 1 [0.3 4] true
	// 2 0
}

// OpenOrCreate continues a stored study when it exists and starts it
// otherwise, so the same program can be run again after a stop.
func ExampleOpenOrCreate() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "tesbo-example")
	defer os.RemoveAll(dir)
	db, err := host.OpenStorage(ctx, filepath.Join(dir, "studies.db"), host.StorageOptions{Create: true})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer db.Close()
	info, _ := quadratic{}.Info(ctx)
	for run := range 2 {
		study, created, err := host.OpenOrCreate(ctx, info, host.Options{DB: db, Name: "quadratic", Init: 2, Seed: 1})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		trials, _ := study.Ask(ctx, 1)
		v, err := quadratic{}.Evaluate(ctx, trials[0].X)
		study.Tell(ctx, trials[0].ID, v, err)
		fmt.Printf("run %d: created %v, %d trials\n", run, created, len(study.Trials()))
		study.Close() // releases the study for the next run
	}
	// Output:
	// run 0: created true, 1 trials
	// run 1: created false, 2 trials
}
