package host_test

import (
	"context"
	"fmt"
	"math"

	"github.com/tesbo/tesbo/host"
)

// With Ask and Tell the caller trains and reports each epoch's accuracy
// with Study.Report; when the median rule says stop it tells the last
// accuracy, and the trial is stored as pruned at that epoch.
func ExampleStudy_Report() {
	ctx := context.Background()
	info, _ := quadratic{}.Info(ctx)
	s, err := host.NewStudy(ctx, info, host.Options{
		Acquisition: "random", Batch: 1, Init: 4, Iters: 8, Seed: 1,
		Pruning: host.Pruning{Rule: host.PrunerMedian},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer s.Close()
	for !s.Done() {
		trials, err := s.Ask(ctx, 1)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		t := trials[0]
		q := -(t.X[0]-0.3)*(t.X[0]-0.3) - (t.X[1]-4)*(t.X[1]-4)/100 // the final accuracy
		var acc float64
		for epoch := 1; epoch <= 10; epoch++ {
			acc = q - math.Exp(-float64(epoch)) // your training epoch here
			if prune, _ := s.Report(ctx, t.ID, epoch, acc); prune {
				break
			}
		}
		if err := s.Tell(ctx, t.ID, acc, nil); err != nil {
			fmt.Println("error:", err)
			return
		}
	}
	pruned := 0
	for _, t := range s.Trials() {
		if t.Status == host.Pruned {
			pruned++
		}
	}
	fmt.Println("trials:", len(s.Trials()), "some pruned:", pruned > 0)
	// Output:
	// trials: 12 some pruned: true
}
