package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// neighbourErr is what a plugin host reports for an evaluation stopped
// because another evaluation took the shared process down.
type neighbourErr struct{}

func (neighbourErr) Error() string        { return "killed with a neighbour" }
func (neighbourErr) NeighbourFault() bool { return true }

// Evaluations stopped by a neighbour's fault are re-run without counting
// as attempts (so with no retries a healthy evaluation still completes),
// but at most maxNeighbourReruns times (so a process that always dies
// cannot keep a trial running).
func TestNeighbourFaultRerun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults int64 // neighbour faults per trial before it succeeds
		want   Status
	}{
		{"re-run completes", 2, Complete},
		{"bounded", maxNeighbourReruns + 1, Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := map[float64]int64{}
			obj := funcObjective{info: unitInfo(1), f: func(ctx context.Context, x []float64) (float64, error) {
				mu.Lock()
				defer mu.Unlock()
				calls[x[0]]++
				if calls[x[0]] <= tc.faults {
					return 0, fmt.Errorf("plugin: %w", neighbourErr{})
				}
				return x[0], nil
			}}
			res, err := Optimize(context.Background(), obj, Options{Proposer: randomProposer{}, Batch: 1, Iters: 1, Init: 2, Retries: 0})
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range res.Trials {
				if tr.Status != tc.want || tr.Attempts != 1 {
					t.Fatalf("trial %d: %v after %d attempts (%s), want %v after 1", tr.ID, tr.Status, tr.Attempts, tr.Error, tc.want)
				}
				if n := calls[tr.X[0]]; n != min(tc.faults+1, maxNeighbourReruns+1) {
					t.Fatalf("trial %d evaluated %d times", tr.ID, n)
				}
			}
		})
	}
}

// stopRunErr is an evaluation error that stops the run (RunStopper), as
// the loader's for a plugin that changed while in use.
type stopRunErr struct{}

func (stopRunErr) Error() string  { return "the plugin changed" }
func (stopRunErr) StopsRun() bool { return true }

// An evaluation error that stops the run (RunStopper) ends Optimize with
// it at once: the trial is not recorded as failed but left for resume,
// and no later trial is evaluated.
func TestRunStopperStopsTheRun(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	var calls atomic.Int32
	obj := funcObjective{info: unitInfo(1), f: func(_ context.Context, x []float64) (float64, error) {
		if calls.Add(1) == 3 {
			return 0, stopRunErr{}
		}
		return -x[0] * x[0], nil
	}}
	o := Options{DB: wrap(db), Name: "s", Acquisition: "random", Init: 2, Iters: 4, Seed: 1, Grace: -1}
	_, err := Optimize(ctx, obj, o)
	if !errors.As(err, new(stopRunErr)) {
		t.Fatalf("Optimize: %v, want the run stopped by the RunStopper", err)
	}
	ts, err := db.Trials(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		if tr.Status == "failed" {
			t.Fatalf("trial %d recorded as failed: %+v", tr.ID, tr)
		}
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("%d evaluations, want the run stopped at the third", n)
	}
}
