package host

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// mixedInfo has a float and an integer parameter.
func mixedInfo() sdk.Info {
	return sdk.Info{Name: "test/mixed", Params: []sdk.Param{
		{Name: "a", Kind: sdk.Float, Low: -1, High: 1},
		{Name: "k", Kind: sdk.Int, Low: 1, High: 5},
	}}
}

func mixedF(x []float64) float64 { return -x[0]*x[0] - (x[1]-3)*(x[1]-3)/10 }

// Attach and Enqueue refuse points outside the space and non-finite
// values, adding nothing.
func TestAttachEnqueueValidate(t *testing.T) {
	ctx := context.Background()
	s, err := NewStudy(ctx, mixedInfo(), baseOptions(1))
	if err != nil {
		t.Fatal(err)
	}
	bad := [][]float64{{0}, {0, 1, 2}, {2, 1}, {0, 0}, {0, 6}, {0, 2.5}, {math.NaN(), 1}, {0, math.Inf(1)}}
	for _, x := range bad {
		if _, err := s.Attach(ctx, x, 1); err == nil {
			t.Errorf("attach %v: no error", x)
		}
		if _, err := s.Enqueue(ctx, x); err == nil {
			t.Errorf("enqueue %v: no error", x)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(-1)} {
		if _, err := s.Attach(ctx, []float64{0, 1}, v); err == nil {
			t.Errorf("attach value %v: no error", v)
		}
	}
	if n := len(s.Trials()); n != 0 {
		t.Fatalf("%d trials after refused calls", n)
	}
	if _, err := s.Recommend(ctx); !errors.Is(err, ErrNoEvaluations) {
		t.Fatalf("Recommend before any evaluation: %v, want ErrNoEvaluations", err)
	}
}

// An attached result is a complete external trial with the given point
// and value, named by Params, shown to the GP (the recommendation), and
// uses up no initial-design point.
func TestAttach(t *testing.T) {
	ctx := context.Background()
	s, err := NewStudy(ctx, mixedInfo(), baseOptions(1))
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.25, 3}
	tr, err := s.Attach(ctx, x, 7)
	if err != nil {
		t.Fatal(err)
	}
	if tr.ID != 0 || tr.Iteration != ExternalIteration || tr.Status != Complete || tr.Value != 7 || tr.X[0] != 0.25 || tr.X[1] != 3 {
		t.Fatalf("attached trial %+v", tr)
	}
	if p := tr.Params(); len(p) != 2 || p["a"] != 0.25 || p["k"] != 3 {
		t.Fatalf("Params() = %v", p)
	}
	rec, err := s.Recommend(ctx)
	if err != nil || rec.TrialID != 0 {
		t.Fatalf("Recommend after attach: %+v, %v", rec, err)
	}
	trs, err := s.Ask(ctx, 0)
	if err != nil || len(trs) != 3 || trs[0].Iteration != 0 {
		t.Fatalf("Ask after attach: %d trials (%v), want the whole initial design of 3", len(trs), err)
	}
	for _, tr := range trs {
		if err := s.Tell(ctx, tr.ID, mixedF(tr.X), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Recommend(ctx); err != nil { // fits, and caches the fit
		t.Fatal(err)
	}
	top, err := s.Attach(ctx, []float64{0, 3}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := s.Recommend(ctx); err != nil || rec.TrialID != top.ID {
		t.Fatalf("Recommend after attaching the best value: %+v, %v, want trial %d", rec, err, top.ID)
	}
}

// Enqueued points are asked next, in order, at most q at a time; Run
// evaluates them first.
func TestEnqueue(t *testing.T) {
	ctx := context.Background()
	s, err := NewStudy(ctx, mixedInfo(), baseOptions(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range [][]float64{{0.5, 1}, {-0.5, 5}, {0, 2}} {
		if _, err := s.Enqueue(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	trs, err := s.Ask(ctx, 2)
	if err != nil || len(trs) != 2 || trs[0].X[0] != 0.5 || trs[1].X[1] != 5 || trs[1].Index != 1 {
		t.Fatalf("first Ask: %+v, %v", trs, err)
	}
	if err := s.Tell(ctx, trs[0].ID, 1, nil); err != nil {
		t.Fatal(err)
	}
	trs, err = s.Ask(ctx, 0)
	if err != nil || len(trs) != 1 || trs[0].X[0] != 0 || trs[0].ID != 2 {
		t.Fatalf("second Ask: %+v, %v", trs, err)
	}
	if trs, _ = s.Ask(ctx, 0); len(trs) != 3 || trs[0].Iteration != 0 {
		t.Fatalf("third Ask: %+v, want the initial design", trs)
	}

	r, err := NewStudy(ctx, mixedInfo(), baseOptions(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Enqueue(ctx, []float64{0.5, 4}); err != nil {
		t.Fatal(err)
	}
	obj := funcObjective{info: mixedInfo(), f: func(_ context.Context, x []float64) (float64, error) { return mixedF(x), nil }}
	res, err := r.Run(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	if tr := res.Trials[0]; tr.Status != Complete || tr.Value != mixedF([]float64{0.5, 4}) {
		t.Fatalf("enqueued trial after Run: %+v", tr)
	}
	if len(res.Trials) != 1+3+2*4 {
		t.Fatalf("%d trials, want the enqueued one plus the budget", len(res.Trials))
	}
}

// askTellScript drives s with a fixed sequence of Attach, Enqueue, Ask and
// Tell calls, from step from to step to, evaluating mixedF.
func askTellScript(t *testing.T, s *Study, from, to int) {
	t.Helper()
	ctx := context.Background()
	for step := from; step < to; step++ {
		switch step {
		case 1:
			if _, err := s.Attach(ctx, []float64{0.75, 2}, mixedF([]float64{0.75, 2})); err != nil {
				t.Fatal(err)
			}
			continue
		case 3:
			if _, err := s.Enqueue(ctx, []float64{-0.25, 4}); err != nil {
				t.Fatal(err)
			}
		}
		trs, err := s.Ask(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trs {
			if err := s.Tell(ctx, tr.ID, mixedF(tr.X), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The same sequence of Attach/Enqueue/Ask/Tell calls gives the same trials,
// bit for bit, in memory, stored, and stored with a reopen in the middle.
func TestAskTellDeterministic(t *testing.T) {
	ctx := context.Background()
	o := baseOptions(4)
	ref, err := NewStudy(ctx, mixedInfo(), o)
	if err != nil {
		t.Fatal(err)
	}
	askTellScript(t, ref, 0, 8)
	again, _ := NewStudy(ctx, mixedInfo(), o)
	askTellScript(t, again, 0, 8)
	sameTrials(t, ref.Trials(), again.Trials())

	db := tempDB(t)
	o.DB, o.Name = wrap(db), "resumed"
	first, err := NewStudy(ctx, mixedInfo(), o)
	if err != nil {
		t.Fatal(err)
	}
	askTellScript(t, first, 0, 5)
	first.Close()
	second, err := OpenStudy(ctx, wrap(db), "resumed", Options{Proposer: testProposer()})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	askTellScript(t, second, 5, 8)
	got := second.Trials()
	sameTrials(t, ref.Trials(), got)
	if got[len(got)-1].Params() == nil || got[0].Params()["k"] != got[0].X[1] {
		t.Fatalf("reopened trials have no names: %+v", got[0])
	}
	var ext int
	for _, tr := range got {
		if tr.Iteration == ExternalIteration {
			ext++
		}
	}
	if ext != 2 {
		t.Fatalf("%d external trials, want 2", ext)
	}
}

// OpenOrCreate creates, then opens; it refuses another objective's study
// and a call without a database.
func TestOpenOrCreate(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	o := baseOptions(2)
	o.DB, o.Name = wrap(db), "s"
	s, created, err := OpenOrCreate(ctx, mixedInfo(), o)
	if err != nil || !created {
		t.Fatalf("first call: created %v, %v", created, err)
	}
	if _, err := s.Attach(ctx, []float64{0, 1}, 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, created, err = OpenOrCreate(ctx, mixedInfo(), o)
	if err != nil || created || len(s.Trials()) != 1 {
		t.Fatalf("second call: created %v, %v", created, err)
	}
	s.Close()
	other := mixedInfo()
	other.Params[1].High = 6
	if _, _, err := OpenOrCreate(ctx, other, o); err == nil {
		t.Fatal("a study of another space was opened")
	}
	other = mixedInfo()
	other.Name = "test/other"
	if _, _, err := OpenOrCreate(ctx, other, o); err == nil {
		t.Fatal("a study of another objective was opened")
	}
	o.DB = nil
	if _, _, err := OpenOrCreate(ctx, mixedInfo(), o); err == nil {
		t.Fatal("no error without a database")
	}
	if _, err := db.Study(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Study(ctx, "absent"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
}
