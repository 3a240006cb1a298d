package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Activity counts trials by state, tracks the best values and the latest
// change, and differs after every kind of write to a study's trials.
func TestActivity(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	s := newStudy(t, d, "a")
	other := newStudy(t, d, "b")
	a0, err := d.Activity(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a0.Trials != 0 || a0.MaxValue != nil || !a0.LastChange.Equal(time.Unix(0, s.CreatedAt.UnixNano())) {
		t.Fatalf("empty study: %+v", a0)
	}
	newPending(t, d, other, 0) // another study's trial is not counted
	var acts []Activity
	step := func(f func()) {
		t.Helper()
		time.Sleep(time.Millisecond) // distinct timestamps
		f()
		a, err := d.Activity(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		acts = append(acts, a)
	}
	var t0, t1 Trial
	step(func() { t0 = newPending(t, d, s, 0); t1 = newPending(t, d, s, 1) })
	step(func() {
		if err := d.StartTrial(ctx, s.ID, 0, 1, time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	step(func() {
		if err := d.StartTrial(ctx, s.ID, 0, 2, time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	step(func() {
		t0.Status, t0.Value, t0.Attempts = Complete, -3, 2
		if err := d.FinishTrial(ctx, s.ID, &t0); err != nil {
			t.Fatal(err)
		}
	})
	step(func() {
		t1.Status, t1.Error, t1.Attempts = Failed, "boom", 1
		if err := d.FinishTrial(ctx, s.ID, &t1); err != nil {
			t.Fatal(err)
		}
	})
	step(func() {
		tr := []Trial{{ID: 2, Iteration: 1, X: []float64{0}, U: []float64{0}}}
		if err := d.AddBatch(ctx, s.ID, Iteration{Iteration: 1}, tr); err != nil {
			t.Fatal(err)
		}
		tr[0].Status, tr[0].Value = Complete, 5
		if err := d.FinishTrial(ctx, s.ID, &tr[0]); err != nil {
			t.Fatal(err)
		}
	})
	step(func() {
		if err := d.SetRecord(ctx, s.ID, 1, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	})
	type counts struct{ n, p, r, c, f, att, its, recs int }
	want := []counts{{2, 2, 0, 0, 0, 0, 1, 0}, {2, 1, 1, 0, 0, 1, 1, 0}, {2, 1, 1, 0, 0, 2, 1, 0},
		{2, 1, 0, 1, 0, 2, 1, 0}, {2, 0, 0, 1, 1, 3, 1, 0}, {3, 0, 0, 2, 1, 3, 2, 0}, {3, 0, 0, 2, 1, 3, 2, 1}}
	for i, a := range acts {
		got := counts{a.Trials, a.Pending, a.Running, a.Complete, a.Failed, a.Attempts, a.Iterations, a.Records}
		if got != want[i] {
			t.Errorf("step %d: %+v, want %+v", i, got, want[i])
		}
		if i > 0 && a.LastChange.Before(acts[i-1].LastChange) {
			t.Errorf("step %d: last change went back", i)
		}
	}
	last := acts[len(acts)-1]
	if last.MaxValue == nil || *last.MaxValue != 5 || *last.MinValue != -3 {
		t.Fatalf("values %v %v", last.MaxValue, last.MinValue)
	}
	if a := acts[3]; !a.LastChange.After(acts[2].LastChange) {
		t.Error("finishing a trial did not move the last change")
	}
}

// LatestRecord is the record of the highest finished iteration.
func TestLatestRecord(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	s := newStudy(t, d, "a")
	if rec, err := d.LatestRecord(ctx, s.ID); rec != nil || err != nil {
		t.Fatalf("no iterations: %s, %v", rec, err)
	}
	for it := range 3 {
		if err := d.AddBatch(ctx, s.ID, Iteration{Iteration: it}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, it := range []int{2, 1} {
		if err := d.SetRecord(ctx, s.ID, it, []byte(fmt.Sprintf(`{"iter":%d}`, it))); err != nil {
			t.Fatal(err)
		}
	}
	if rec, err := d.LatestRecord(ctx, s.ID); string(rec) != `{"iter":2}` || err != nil {
		t.Fatalf("latest record %s, %v", rec, err)
	}
}
