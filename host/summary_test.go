package host

import (
	"context"
	"encoding/json"
	"testing"
)

// A shared study's summary is its latest stored record when that record
// covers every finished trial (the proposer's, as the web view shows it),
// not a record made again from one fresh fit. The stored record is marked
// here (best_value 123) to tell the two apart.
func TestWorkerSummaryUsesStoredRecord(t *testing.T) {
	ctx := context.Background()
	raw := openDB(t, t.TempDir()+"/s.db", true)
	o := Options{Acquisition: "ei", Batch: 2, Iters: 3, Init: 4, Seed: 2, Grace: -1, DB: wrap(raw), Name: "s"}
	res, err := Optimize(ctx, hartmann6(), o)
	if err != nil {
		t.Fatal(err)
	}
	row, err := raw.Study(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	its, err := raw.Iterations(ctx, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	last := its[len(its)-1]
	if err := json.Unmarshal(last.Record, &rec); err != nil {
		t.Fatal(err)
	}
	marked := 123.0
	rec.BestValue = &marked
	b, _ := json.Marshal(rec)
	if err := raw.SetRecord(ctx, row.ID, last.Iteration, b); err != nil {
		t.Fatal(err)
	}
	_, sum, err := workerSummary(ctx, raw, "s", hartmann6())
	if err != nil {
		t.Fatal(err)
	}
	if sum.BestValue == nil || *sum.BestValue != marked || sum.Evaluations != res.Evaluations {
		t.Fatalf("summary best value %v (%d evaluations), want the stored record's 123", sum.BestValue, sum.Evaluations)
	}
}
