package host

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/internal/testenv"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// newWorkerStudy stores a new branin study in db (not held by anyone).
func newWorkerStudy(t *testing.T, db store.Storage, name, acqName string, batch, iters int) {
	t.Helper()
	ctx := context.Background()
	info, _ := (&branin{}).Info(ctx)
	s, err := NewStudy(ctx, info, Options{DB: wrap(db), Name: name, Acquisition: acqName, Batch: batch, Iters: iters,
		Init: 3, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func openTestDB(t *testing.T, target string) *store.DB {
	t.Helper()
	db, err := store.Open(target, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Three workers in one process (three holders) evaluate a study's whole
// budget exactly once each, on SQLite, PostgreSQL and in memory; one
// worker with one slot gives bitwise the same trials on all three.
func TestWorkers(t *testing.T) {
	pg := testenv.StartPostgres(t)
	backends := map[string]func() store.Storage{
		"sqlite":   func() store.Storage { return openTestDB(t, filepath.Join(t.TempDir(), "w.db")) },
		"postgres": func() store.Storage { return openTestDB(t, pg.NewDatabase(t)) },
		"memory":   func() store.Storage { return store.NewMemory() },
	}
	single := map[string][]Trial{}
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := open()
			newWorkerStudy(t, db, "many", "qei", 3, 5)
			var wg sync.WaitGroup
			for range 3 {
				wg.Go(func() {
					res, err := RunWorker(ctx, wrap(db), "many", &branin{}, WorkerOptions{Parallel: 2, Poll: 5 * time.Millisecond})
					if err != nil || !res.Done {
						t.Errorf("worker: %+v %v", res, err)
					}
				})
			}
			wg.Wait()
			checkComplete(t, db, "many", 3+5*3)

			newWorkerStudy(t, db, "one", "tes", 2, 3)
			if _, err := RunWorker(ctx, wrap(db), "one", &branin{}, WorkerOptions{Poll: time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			single[name] = checkComplete(t, db, "one", 3+2*3)
		})
	}
	for _, other := range []string{"postgres", "memory"} {
		a, b := single["sqlite"], single[other]
		if len(a) != len(b) {
			t.Fatalf("%d vs %d trials", len(a), len(b))
		}
		for i := range a {
			for j := range a[i].X {
				if math.Float64bits(a[i].X[j]) != math.Float64bits(b[i].X[j]) || math.Float64bits(a[i].Value) != math.Float64bits(b[i].Value) {
					t.Fatalf("trial %d differs: sqlite %v %v, %s %v %v", i, a[i].X, a[i].Value, other, b[i].X, b[i].Value)
				}
			}
		}
	}
}

// checkComplete checks that study name has exactly n trials, all complete.
func checkComplete(t *testing.T, db store.Storage, name string, n int) []Trial {
	t.Helper()
	ctx := context.Background()
	row, err := db.Study(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := loadTrials(ctx, db, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != n {
		t.Fatalf("study %s: %d trials, want %d", name, len(ts), n)
	}
	for _, tr := range ts {
		if tr.Status != Complete || tr.Attempts != 1 || tr.Worker == "" {
			t.Fatalf("study %s: trial %+v", name, tr)
		}
	}
	return ts
}

// Asynchronous TES conditions on a running trial: given the same model
// and random stream, the point it proposes with nothing pending (x0, the
// current optimum of α) and the point it proposes while x0 is pending
// differ by a wide margin; with nothing pending both calls give x0.
func TestAsyncTESAvoidsPending(t *testing.T) {
	ctx := context.Background()
	obj := &branin{}
	info, _ := obj.Info(ctx)
	s, err := NewStudy(ctx, info, Options{Acquisition: "tes", Init: 6, Seed: 3, Batch: 1, Iters: 5, NoiseVar: -1})
	if err != nil {
		t.Fatal(err)
	}
	design, err := s.Ask(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range design {
		if err := s.Tell(ctx, tr.ID, braninF(tr.X), nil); err != nil {
			t.Fatal(err)
		}
	}
	ds := newDataset(s.trials, 2, false)
	fr, err := s.fitCached(context.Background(), ds, 1)
	if err != nil {
		t.Fatal(err)
	}
	propose := func(pending *mat.Dense) []float64 {
		st := &acq.State{GP: fr.gp, Best: ds.best(), Iter: 1, Rand: streamRand(3, 1, streamPropose), Pending: pending}
		prop, err := acq.Lookup("tes", acq.Options{}) // fresh: TES carries X* between calls
		if err != nil {
			t.Fatal(err)
		}
		X, err := prop.Propose(ctx, st, 1)
		if err != nil {
			t.Fatal(err)
		}
		return X.RawRowView(0)
	}
	x0 := propose(nil)
	again := propose(nil)
	x1 := propose(mat.NewDense(1, 2, append([]float64(nil), x0...)))
	dist := func(a, b []float64) float64 {
		return math.Max(math.Abs(a[0]-b[0]), math.Abs(a[1]-b[1]))
	}
	t.Logf("x0 %v; with x0 pending %v (L∞ distance %.3g in the unit cube)", x0, x1, dist(x0, x1))
	if dist(x0, again) > 1e-9 {
		t.Fatalf("the same state proposed %v and %v", x0, again)
	}
	if dist(x0, x1) < 0.05 {
		t.Fatalf("with %v pending TES proposed %v, only %.3g away", x0, x1, dist(x0, x1))
	}
}

// A worker's number of slots is bounded like a study's (MaxParallel),
// refused before the database is touched.
func TestWorkerParallelBounded(t *testing.T) {
	_, err := RunWorker(context.Background(), nil, "s", nil, WorkerOptions{Parallel: MaxParallel + 1})
	if err == nil || !strings.Contains(err.Error(), "MaxParallel") {
		t.Fatalf("got %v, want a MaxParallel refusal", err)
	}
}

// A worker refuses a study a single process holds (its lease held by a
// non-worker) once singleWait has passed, and joins one whose holder lets
// go within it — as `tesbo-host run` on PostgreSQL does after creating the
// study, before it joins as a worker itself.
func TestWorkerWaitsForSingleHolder(t *testing.T) {
	defer func(w time.Duration) { singleWait = w }(singleWait)
	singleWait = 300 * time.Millisecond
	ctx := context.Background()
	db := openTestDB(t, filepath.Join(t.TempDir(), "w.db"))
	info, _ := (&branin{}).Info(ctx)
	s, err := NewStudy(ctx, info, Options{DB: wrap(db), Name: "held", Acquisition: "qei", Batch: 2, Iters: 2, Init: 3, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err = RunWorker(ctx, wrap(db), "held", &branin{}, WorkerOptions{Poll: time.Millisecond})
	var held *LeaseHeldError // the host's type, as an embedder tests for it
	if !errors.As(err, &held) || held.PID == 0 {
		t.Fatalf("worker on a study a single process holds: %v, want *host.LeaseHeldError", err)
	}
	if waited := time.Since(t0); waited < singleWait {
		t.Fatalf("refused after %v, before singleWait %v", waited, singleWait)
	}

	singleWait = 30 * time.Second
	go func() {
		time.Sleep(200 * time.Millisecond)
		s.Close() // the creator lets go, as run does before joining
	}()
	res, err := RunWorker(ctx, wrap(db), "held", &branin{}, WorkerOptions{Poll: time.Millisecond})
	if err != nil || !res.Done {
		t.Fatalf("worker after the holder let go: %+v %v", res, err)
	}
	checkComplete(t, db, "held", 3+2*2)
}

// RunWorker refuses a study Run evaluated (its trials name no worker) with
// a *RunAloneError, before evaluating anything.
func TestRunWorkerRefusesRunAlone(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, filepath.Join(t.TempDir(), "a.db"))
	info, _ := (&branin{}).Info(ctx)
	s, err := NewStudy(ctx, info, Options{DB: wrap(db), Name: "alone", Acquisition: "random", Batch: 2, Iters: 1, Init: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, &branin{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	res, err := RunWorker(ctx, wrap(db), "alone", &branin{}, WorkerOptions{Poll: time.Millisecond})
	var alone *RunAloneError
	if !errors.As(err, &alone) || alone.Study != "alone" || res != nil {
		t.Fatalf("RunWorker on a study Run evaluated: %+v, %v", res, err)
	}
}

// A worker that stops (its context cancelled) gives up its registration
// as it returns: its evaluation slots stop counting for the proposer at
// once, not when its registration's TTL runs out (a crashed worker's count
// until then: nothing is left to remove them).
func TestWorkerExitReleasesSlots(t *testing.T) {
	db := openTestDB(t, filepath.Join(t.TempDir(), "w.db"))
	newWorkerStudy(t, db, "slots", "random", 2, 200)
	row, err := db.Study(context.Background(), "slots")
	if err != nil {
		t.Fatal(err)
	}
	obj := funcObjective{info: mustInfo(t, &branin{}), f: func(ctx context.Context, x []float64) (float64, error) {
		time.Sleep(20 * time.Millisecond)
		return x[0], nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := RunWorker(ctx, wrap(db), "slots", obj, WorkerOptions{Parallel: 3, LeaseTTL: time.Hour, Poll: time.Millisecond})
		done <- err
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		ws, err := db.Workers(context.Background(), row.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) == 1 && ws[0].Slots == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not register: %+v", ws)
		}
	}
	cancel()
	<-done
	if ws, err := db.Workers(context.Background(), row.ID); err != nil || len(ws) != 0 {
		t.Fatalf("after the worker stopped: %+v %v (its hour-long registration still counts)", ws, err)
	}
	if p, r, _, err := db.QueueCounts(context.Background(), row.ID); err != nil || r != 0 {
		t.Fatalf("%d trials still running after the worker stopped (%d pending, %v)", r, p, err)
	}
}

func mustInfo(t *testing.T, o sdk.Objective) sdk.Info {
	t.Helper()
	info, err := o.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info
}
