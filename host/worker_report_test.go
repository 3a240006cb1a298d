package host

import (
	"context"
	"errors"
	"fmt"
	"github.com/rs/zerolog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// liveCurve reports steps 1 and 2 of its first evaluation, then waits
// for the test before finishing it; the other evaluations run through.
type liveCurve struct {
	curveObjective
	calls             *atomic.Int32
	reported, release chan struct{}
}

func (o liveCurve) Evaluate(ctx context.Context, x []float64) (float64, error) {
	if o.calls.Add(1) > 1 {
		return o.curveObjective.Evaluate(ctx, x)
	}
	for k := 1; k <= 2; k++ {
		if _, err := sdk.Report(ctx, k, float64(k)); err != nil {
			return 0, err
		}
	}
	o.reported <- struct{}{}
	<-o.release
	return 2, nil
}

// A worker stores each reported value as it comes (ReportLeased), so the
// shared study shows a running trial's curve, as a single process does.
func TestWorkerReportsStoredAsTheyCome(t *testing.T) {
	ctx := context.Background()
	obj := liveCurve{curveObjective{steps: 9}, new(atomic.Int32), make(chan struct{}), make(chan struct{})}
	info, _ := obj.Info(ctx)
	db := wrap(openTestDB(t, t.TempDir()+"/w.db"))
	o := Options{DB: db, Name: "w", Acquisition: "random", Batch: 1, Iters: 1, Init: 2, Seed: 3,
		Pruning: Pruning{Rule: PrunerMedian, Model: PruneModelLast}}
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	done := make(chan error, 1)
	go func() {
		_, err := RunWorker(ctx, db, "w", obj, WorkerOptions{Parallel: 1, Poll: 2 * time.Millisecond})
		done <- err
	}()
	<-obj.reported // the first evaluation reported steps 1 and 2
	trials, err := db.Trials(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	var running *Trial
	for i := range trials {
		if trials[i].Status == Running {
			running = &trials[i]
		}
	}
	if running == nil || len(running.Intermediates) != 2 || running.Intermediates[1] != (Intermediate{Step: 2, Value: 2}) {
		t.Errorf("running trial read back as %+v, want its two reported values", running)
	}
	close(obj.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A worker's evaluation stopped by another's fault (loader's neighbour
// fault; also a pause past its limit) is re-run, not stored as failed,
// as in a single process (TestNeighbourFaultRerun): the budget is all
// complete trials of one attempt each.
func TestWorkerNeighbourFaultRerun(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	calls := map[float64]int{}
	obj := funcObjective{info: unitInfo(1), f: func(ctx context.Context, x []float64) (float64, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[x[0]]++
		if calls[x[0]] <= 2 {
			return 0, fmt.Errorf("plugin: %w", neighbourErr{})
		}
		return x[0], nil
	}}
	db := MemoryStorage()
	s, err := NewStudy(ctx, unitInfo(1), Options{DB: db, Name: "n", Acquisition: "random", Batch: 1, Iters: 2, Init: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := RunWorker(ctx, db, "n", obj, WorkerOptions{Parallel: 1, Poll: 2 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	trials, err := db.Trials(ctx, "n")
	if err != nil || len(trials) != 4 {
		t.Fatalf("%d trials, %v", len(trials), err)
	}
	for _, tr := range trials {
		if tr.Status != Complete || tr.Attempts != 1 || calls[tr.X[0]] != 3 {
			t.Fatalf("trial %d: %v after %d attempts (%s), %d calls; want complete after 1 attempt and 3 calls", tr.ID, tr.Status, tr.Attempts, tr.Error, calls[tr.X[0]])
		}
	}
}

// downOnce is a store whose first ReportTrial fails as a server that is
// down past the store's retries does.
type downOnce struct {
	store.Storage
	failed atomic.Bool
}

func (d *downOnce) ReportTrial(ctx context.Context, studyID int64, h store.Holder, t *store.Trial, maxAttempts int) (bool, error) {
	if d.failed.CompareAndSwap(false, true) {
		return false, fmt.Errorf("report trial %d: %w", t.ID, store.ErrUnavailable)
	}
	return d.Storage.ReportTrial(ctx, studyID, h, t, maxAttempts)
}

// An outcome the database could not take is kept and reported when it is
// back, not dropped: dropped, its trial stayed running under the live
// worker and the study never finished.
func TestWorkerReportsAgainAfterOutage(t *testing.T) {
	ctx := context.Background()
	mem := storedRandomStudy(t, "o", 2)
	down := &downOnce{Storage: mem.s}
	obj := funcObjective{info: unitInfo(1), f: func(_ context.Context, x []float64) (float64, error) { return x[0], nil }}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := RunWorker(wctx, &Storage{s: down}, "o", obj, WorkerOptions{Parallel: 1, Poll: 2 * time.Millisecond})
	if err != nil || !res.Done {
		t.Fatalf("worker: %+v, %v; want the study done", res, err)
	}
	trials, err := mem.Trials(ctx, "o")
	if err != nil || len(trials) != 4 {
		t.Fatalf("%d trials, %v", len(trials), err)
	}
	for _, tr := range trials {
		if tr.Status != Complete || tr.Attempts != 1 {
			t.Fatalf("trial %d: %v after %d attempts", tr.ID, tr.Status, tr.Attempts)
		}
	}
}

// A worker whose study is done waits for the proposer to store the last
// iterations' records before it leaves, so its OnIteration (worker
// --json) gets every record: it left at once and missed the last ones.
func TestWorkerAwaitsLastRecords(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	s, err := NewStudy(ctx, unitInfo(1), Options{DB: db, Name: "r", Acquisition: "random", Batch: 1, Iters: 1, Init: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(ctx, 0); err != nil { // the design
		t.Fatal(err)
	}
	if _, err := s.Ask(ctx, 1); err != nil { // iteration 1, no record yet
		t.Fatal(err)
	}
	s.Close()
	row, err := db.store().Study(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond) // the proposer, elsewhere
		db.store().SetRecord(ctx, row.ID, 1, []byte(`{"iter":1}`))
	}()
	w := &worker{db: db.store(), id: row.ID, o: WorkerOptions{Poll: 2 * time.Millisecond}}
	w.awaitRecords(ctx, time.Minute)
	its, err := db.store().Iterations(ctx, row.ID)
	if err != nil || len(its) != 2 || its[1].Record == nil {
		t.Fatalf("iterations %+v, %v: want iteration 1's record stored when the wait ends", its, err)
	}
}

// downUntilDone is a store whose server is down: ReportTrial retries, as
// the store does, until its context ends.
type downUntilDone struct{ store.Storage }

func (downUntilDone) ReportTrial(ctx context.Context, _ int64, _ store.Holder, t *store.Trial, _ int) (bool, error) {
	<-ctx.Done()
	return false, fmt.Errorf("report trial %d: %w", t.ID, store.ErrUnavailable)
}

func (downUntilDone) LastUnavailable() time.Time { return time.Now() }

func (downUntilDone) UnregisterWorker(ctx context.Context, _ int64, _ store.Holder) error {
	<-ctx.Done() // as the store retrying it
	return store.ErrUnavailable
}

// A worker stopped (SIGTERM) while the database is down leaves after
// reportGrace, not after the store's minutes of retries (it stayed 5
// minutes, past any service manager's stop timeout), and does not wait to
// unregister from a server it just found down.
func TestWorkerLeavesDuringOutage(t *testing.T) {
	defer func(g time.Duration) { reportGrace = g }(reportGrace)
	reportGrace = 20 * time.Millisecond
	ctx := context.Background()
	mem := storedRandomStudy(t, "o", 2)
	wctx, stop := context.WithCancel(ctx)
	obj := funcObjective{info: unitInfo(1), f: func(_ context.Context, x []float64) (float64, error) {
		stop() // the signal arrives while the evaluation runs; it finishes within the grace
		return x[0], nil
	}}
	done := make(chan error, 1)
	go func() {
		_, err := RunWorker(wctx, &Storage{s: downUntilDone{mem.s}}, "o", obj, WorkerOptions{Parallel: 1, Poll: 2 * time.Millisecond})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("worker: %v, want it interrupted", err)
		}
	case <-time.After(releaseTimeout / 2):
		t.Fatal("the worker did not leave while its report or unregistering retried")
	}
}

// cutOffStore is a store whose handle last found the server unreachable
// at unavailable.
type cutOffStore struct {
	store.Storage
	unavailable time.Time
}

func (c *cutOffStore) LastUnavailable() time.Time { return c.unavailable }

var _ interface{ LastUnavailable() time.Time } = (*store.DB)(nil)

// A worker that was itself cut off from the database (a store call found
// the server down, or its heartbeat came late) reclaims no expired lease
// until a lease's TTL has passed since: an outage longer than the TTL
// expires live workers' leases too, and taking them threw the live
// workers' finished evaluations away.
func TestNoReclaimRightAfterOutage(t *testing.T) {
	ctx := context.Background()
	mem := storedRandomStudy(t, "c", 1)
	db := &cutOffStore{Storage: mem.s}
	row, err := db.Study(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := db.LeaseTrial(ctx, row.ID, store.NewHolder(), time.Nanosecond); err != nil || tr == nil {
		t.Fatalf("lease: %v, %v", tr, err)
	}
	time.Sleep(time.Millisecond) // the lease expires, as in an outage
	const ttl = time.Minute
	running := func() int {
		_, n, _, err := db.QueueCounts(ctx, row.ID)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	w := &worker{db: db, id: row.ID, o: WorkerOptions{LeaseTTL: ttl}, attempts: 1, log: zerolog.Nop()}
	reclaim := func() { w.lastRec = time.Time{}; w.maybeReclaim(ctx) }

	db.unavailable = time.Now() // the server just came back
	if reclaim(); running() != 1 {
		t.Fatal("reclaimed an expired lease right after the database was unreachable")
	}
	db.unavailable = time.Now().Add(-2 * ttl)
	w.cutOff.Store(time.Now().UnixNano()) // a late heartbeat
	if reclaim(); running() != 1 {
		t.Fatal("reclaimed an expired lease right after a late heartbeat")
	}
	w.cutOff.Store(time.Now().Add(-2 * ttl).UnixNano())
	if reclaim(); running() != 0 {
		t.Fatal("did not reclaim an expired lease a TTL after the outage")
	}
}

// storedRandomStudy stores, in memory, a study name of random search on
// unitInfo(1) (2 initial points, then iters of 1) with its design issued.
func storedRandomStudy(t *testing.T, name string, iters int) *Storage {
	t.Helper()
	ctx := context.Background()
	mem := MemoryStorage()
	s, err := NewStudy(ctx, unitInfo(1), Options{DB: mem, Name: name, Acquisition: "random", Batch: 1, Iters: iters, Init: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Ask(ctx, 0); err != nil {
		t.Fatal(err)
	}
	return mem
}
