package host

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

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
