package host

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tesbo/tesbo/internal/testenv"
)

// Two workers on PostgreSQL evaluate a study with two objectives and a
// constraint: every trial is evaluated once, with its outputs stored, the
// proposals are parego's (no fallback), and the study's last record carries
// the Pareto set. Under CI PostgreSQL must be there (testenv).
func TestWorkersTwoObjectives(t *testing.T) {
	pg := testenv.StartPostgres(t)
	ctx := context.Background()
	db := openTestDB(t, pg.NewDatabase(t))
	obj := &twoObjectives{bound: 0.9}
	info, _ := obj.Info(ctx)
	s, err := NewStudy(ctx, info, Options{DB: wrap(db), Name: "mo", Batch: 2, Iters: 4, Init: 4, Seed: 13})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			res, err := RunWorker(ctx, wrap(db), "mo", &twoObjectives{bound: 0.9}, WorkerOptions{Parallel: 2, Poll: 5 * time.Millisecond})
			if err != nil || !res.Done {
				t.Errorf("worker: %+v %v", res, err)
			}
		})
	}
	wg.Wait()
	ts := checkComplete(t, db, "mo", 4+4*2)
	for _, tr := range ts {
		want, _ := obj.EvaluateOutputs(ctx, tr.X)
		if len(tr.Outputs) != 3 || tr.Outputs[0] != want[0] || tr.Outputs[2] != want[2] {
			t.Fatalf("trial %d: outputs %v, want %v", tr.ID, tr.Outputs, want)
		}
	}
	row, err := db.Study(ctx, "mo")
	if err != nil {
		t.Fatal(err)
	}
	its, err := db.Iterations(ctx, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range its[1:] {
		if fb, _ := FallbackReason(it.Model); fb != "" || !strings.Contains(string(it.Model), `"outputs"`) {
			t.Fatalf("iteration %d: model %s", it.Iteration, it.Model)
		}
	}
	rec, err := db.LatestRecord(ctx, row.ID)
	if err != nil || !strings.Contains(string(rec), `"pareto":{"trials":[`) || !strings.Contains(string(rec), `"hypervolume":`) {
		t.Fatalf("latest record %s, %v", rec, err)
	}
}
