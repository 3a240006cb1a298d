package host

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Worker mode stores one record per proposal once its trials have all
// finished (the proposer makes them), passes them to OnIteration in order,
// and setWorkerBudget raises the global budget of a study workers share.
func TestWorkerRecordsAndBudget(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, filepath.Join(t.TempDir(), "w.db"))
	newWorkerStudy(t, db, "rec", "qei", 2, 3)
	work := func() []Record {
		var recs []Record
		res, err := RunWorker(ctx, wrap(db), "rec", &branin{}, WorkerOptions{Parallel: 2, Poll: 5 * time.Millisecond,
			OnIteration: func(r Record) { recs = append(recs, r) }})
		if err != nil || !res.Done {
			t.Fatalf("worker: %+v %v", res, err)
		}
		return recs
	}
	check := func(recs []Record, trials int) {
		t.Helper()
		checkComplete(t, db, "rec", trials)
		row, err := db.Study(ctx, "rec")
		if err != nil {
			t.Fatal(err)
		}
		its, err := db.Iterations(ctx, row.ID)
		if err != nil {
			t.Fatal(err)
		}
		bo := 0
		for _, it := range its {
			if it.Iteration > 0 {
				bo++
			}
		}
		if len(recs) != bo || bo == 0 {
			t.Fatalf("%d records for %d BO iterations", len(recs), bo)
		}
		evals := 3
		for i, r := range recs {
			evals += len(r.Batch)
			if r.Iter != i+1 || len(r.Values) != len(r.Batch) || r.BestValue == nil {
				t.Fatalf("record %d: %+v", i, r)
			}
		}
		if evals != trials {
			t.Fatalf("records hold %d evaluations with the design, want %d", evals, trials)
		}
	}
	check(work(), 3+3*2)
	if err := setWorkerBudget(ctx, db, "rec", 2); err == nil || !strings.Contains(err.Error(), "new total") {
		t.Fatalf("budget below the trials issued: %v", err)
	}
	if err := setWorkerBudget(ctx, db, "rec", 5); err != nil {
		t.Fatal(err)
	}
	check(work(), 3+5*2)
}
