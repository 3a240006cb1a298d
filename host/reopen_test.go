package host

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Reopening a study with a budget below the iterations it has run is
// refused with a BudgetError and leaves the stored budget alone; a study
// with nothing left to do reports its last stored record and the time it
// took.
func TestReopenBudgetAndLastRecord(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	obj := &branin{}
	o := Options{Name: "s", DB: wrap(db), Acquisition: "random", Iters: 4, Init: 2, Seed: 5}
	first, err := Optimize(ctx, obj, o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = OpenStudy(ctx, wrap(db), "s", Options{Iters: 3})
	var be *BudgetError
	if !errors.As(err, &be) || be.Iters != 3 || be.Done != 4 {
		t.Fatalf("reopened with a budget of 3 after 4 iterations: %v", err)
	}
	s, err := OpenStudy(ctx, wrap(db), "s", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Settings().Iters; got != 4 {
		t.Fatalf("stored budget %d after the refusal, want 4", got)
	}
	res, err := s.Run(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	if res.BestValue == nil || *res.BestValue != *first.BestValue || res.Regret == nil || *res.Regret != *first.Regret {
		t.Fatalf("complete study's best value %v regret %v, want %v %v", res.BestValue, res.Regret, *first.BestValue, *first.Regret)
	}
	if d := res.StudyTime - first.StudyTime; res.StudyTime <= 0 || d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("study time %v (first run's %v)", res.StudyTime, first.StudyTime)
	}
}
