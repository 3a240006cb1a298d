package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/store"
)

// bigStudy stores a finished study of n trials in iterations of 10, each
// iteration with a record, written straight through store (the host caps a
// study at host.MaxTrials, below the sizes a viewer should still handle).
func bigStudy(b *testing.B, n int) *store.DB {
	b.Helper()
	ctx := context.Background()
	db, _ := newDB(b)
	s := openStudy(b, db, "big", "random", 1)
	s.Close()
	row, err := db.Study(ctx, "big")
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for it := 1; it <= n/10; it++ {
		batch := make([]store.Trial, 10)
		for i := range batch {
			u := []float64{rng.Float64(), rng.Float64()}
			batch[i] = store.Trial{ID: (it-1)*10 + i, Iteration: it, Index: i, U: u, X: []float64{-5 + 15*u[0], 15 * u[1]}}
		}
		if err := db.AddBatch(ctx, row.ID, store.Iteration{Iteration: it, Model: []byte(`{}`)}, batch); err != nil {
			b.Fatal(err)
		}
		for i := range batch {
			t := &batch[i]
			t.Status, t.Attempts = store.Complete, 1
			t.Value, _ = branin{}.Evaluate(ctx, t.X)
			if err := db.FinishTrial(ctx, row.ID, t); err != nil {
				b.Fatal(err)
			}
		}
		v := batch[0].Value
		rec, _ := json.Marshal(host.Record{Iter: it, Evals: it * 10, BestValue: &v, BestObserved: &v, FitS: 0.1, ProposeS: 0.2})
		if err := db.SetRecord(ctx, row.ID, it, rec); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// BenchmarkStudyPage10k loads a 10,000-trial study's page as a browser
// does before drawing it: the HTML, /api/study and /api/trials (the model
// view and the event stream follow asynchronously). Target: well under 1 s
// per load.
func BenchmarkStudyPage10k(b *testing.B) {
	db := bigStudy(b, 10000)
	srv := newServer(b, db, Settings{})
	var size int
	for b.Loop() {
		size = 0
		for _, p := range []string{"/study/big", "/api/study?name=big", "/api/trials?name=big"} {
			rec := get(b, srv, p)
			if rec.Code != 200 {
				b.Fatalf("%s: %d %s", p, rec.Code, rec.Body.String())
			}
			size += rec.Body.Len()
		}
	}
	b.ReportMetric(float64(size)/1e6, "MB/load")
}

// BenchmarkEventPoll10k is one idle poll of a watched 10,000-trial study
// (nothing changed): what every watched study costs per Settings.Poll.
func BenchmarkEventPoll10k(b *testing.B) {
	db := bigStudy(b, 10000)
	srv := newServer(b, db, Settings{})
	row, _ := db.Study(context.Background(), "big")
	w := &watch{name: "big", id: row.ID}
	if _, err := w.poll(context.Background(), srv); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		evs, err := w.poll(context.Background(), srv)
		if err != nil || len(evs) != 0 {
			b.Fatal(err, fmt.Sprint(len(evs)))
		}
	}
}
