package host

import (
	"context"
	"encoding/json"
	"math"
	"slices"
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

// When the stored record is behind the trials, the summary's own record
// fits the model as the study's acquisition does — on outputs warped for
// `tes` (acq.OutputWarper) — and recommends what the study did. Fitted
// on unwarped outputs it recommended far worse points (regret 19 on
// Branin where the study's records said 2e-6, the probe's figures).
func TestWorkerSummaryRefitsAsTheStudy(t *testing.T) {
	ctx := context.Background()
	raw := openDB(t, t.TempDir()+"/s.db", true)
	info := unitInfo(2)
	info.Minimize = true
	obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) {
		return math.Exp(25*math.Abs(x[0]-0.3)) + math.Exp(25*math.Abs(x[1]-0.6)), nil // spans decades: warped
	}}
	o := Options{Batch: 2, Iters: 6, Init: 4, Seed: 2, Grace: -1, DB: wrap(raw), Name: "s"}
	res, err := Optimize(ctx, obj, o)
	if err != nil {
		t.Fatal(err)
	}
	row, _ := raw.Study(ctx, "s")
	its, _ := raw.Iterations(ctx, row.ID)
	var rec Record
	last := its[len(its)-1]
	if err := json.Unmarshal(last.Record, &rec); err != nil {
		t.Fatal(err)
	}
	rec.Evals = 0 // behind: the summary makes its own
	b, _ := json.Marshal(rec)
	if err := raw.SetRecord(ctx, row.ID, last.Iteration, b); err != nil {
		t.Fatal(err)
	}
	_, sum, err := workerSummary(ctx, raw, "s", obj)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Best == nil || !slices.Equal(sum.Best.X, res.Best.X) {
		t.Fatalf("summary recommends %+v, the study %+v", sum.Best, res.Best)
	}
}
