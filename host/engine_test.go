package host

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// Run is the engine as one local worker with the synchronous policy: with
// more slots than the batch, a batch is asked for only once every earlier
// trial has finished (each proposal sees every outcome), and the study
// stops at its budget, Init + Iters × Batch evaluations.
func TestRunEngineSynchronous(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	finished := map[int]bool{}
	evaluations := 0
	s, err := NewStudy(ctx, unitInfo(2), Options{Acquisition: "random", Batch: 3, Iters: 4, Init: 2, Parallel: 5, Seed: 2,
		OnTrial: func(tr Trial) {
			mu.Lock()
			finished[tr.ID] = true
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	obj := funcObjective{info: unitInfo(2), f: func(_ context.Context, x []float64) (float64, error) {
		time.Sleep(2 * time.Millisecond) // the other slots run meanwhile
		ts := s.Trials()
		i := slices.IndexFunc(ts, func(tr Trial) bool { return slices.Equal(tr.X, x) })
		mu.Lock()
		defer mu.Unlock()
		evaluations++
		for _, tr := range ts {
			if tr.Iteration < ts[i].Iteration && !finished[tr.ID] {
				t.Errorf("trial %d (iteration %d) evaluated while trial %d of iteration %d is in flight", i, ts[i].Iteration, tr.ID, tr.Iteration)
			}
		}
		return x[0] + x[1], nil
	}}
	res, err := s.Run(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 2+4*3 || res.Iterations != 4 || evaluations != 14 || !s.Done() {
		t.Errorf("%d trials in %d iterations, %d evaluations (done %v), want 14 in 4", len(res.Trials), res.Iterations, evaluations, s.Done())
	}
}
