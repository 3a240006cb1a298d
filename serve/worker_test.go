package serve

import (
	"context"
	"testing"
	"time"

	"github.com/tesbo/tesbo/host"
)

// A worker-mode study whose workers were not asked for records (no
// --json: WorkerOptions.OnIteration unset) still shows the page's
// recommendation, regret and model with its trusted maximizers: the
// proposer stores each proposal's record regardless.
func TestWorkerStudyShowsRecommendation(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	info, _ := branin{}.Info(ctx)
	s, err := host.NewStudy(ctx, info, host.Options{DB: hostStorage(db), Name: "w", Acquisition: "tes", Init: 4, Batch: 2, Iters: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	res, err := host.RunWorker(ctx, hostStorage(db), "w", branin{}, host.WorkerOptions{Parallel: 2, Poll: 5 * time.Millisecond})
	if err != nil || !res.Done {
		t.Fatalf("worker: %+v %v", res, err)
	}
	srv := newServer(t, db, Settings{})
	var st studyJSON
	decodeJSON(t, get(t, srv, "/api/study?name=w"), 200, &st)
	if st.Summary.Recommendation == nil || st.Summary.Regret == nil || st.Summary.Iteration == 0 {
		t.Fatalf("worker study without records: summary %+v, iterations %+v", *st.Summary, st.Iterations)
	}
	done := 0
	for _, it := range st.Iterations {
		if it.Done {
			done++
		}
	}
	if last := st.Iterations[len(st.Iterations)-1]; done == 0 || !last.Done || st.Summary.Iteration != last.Iter {
		t.Fatalf("the last iteration has no record: summary of iteration %d, iterations %+v", st.Summary.Iteration, st.Iterations)
	}
	var m modelJSON
	decodeJSON(t, get(t, srv, "/api/model?name=w"), 200, &m)
	if len(m.Trusted) < 2 || m.Entropy == nil || *m.Entropy <= 0 {
		t.Fatalf("model of the worker study: %d trusted maximizers, H = %v, note %q", len(m.Trusted), m.Entropy, m.Note)
	}
}
