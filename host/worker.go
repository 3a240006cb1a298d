package host

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/prune"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// Worker mode: any number of processes, on any hosts, work on one stored
// study (typically on PostgreSQL). Each runs RunWorker, the engine of
// engine.go on the stored queue: it takes trials from the study's queue
// (store.QueueStore.LeaseTrial), evaluates them and reports their
// outcomes. When the queue is empty, one of them — the holder of the
// study's lease, which makes it the proposer; another worker takes the
// lease over when the proposer dies — proposes as many new points as there
// are idle evaluation slots over all live workers (at most Options.Batch),
// conditioned on the trials still running: the acquisition sees them as
// acq.State.Pending. For TES that is the paper's batch α with the pending
// points held fixed in the batch, α(B | P) = α(P ∪ B) − α(P): the joint
// predictive of §4.3 already covers P ∪ B, so the new points are chosen
// for the information they add to what the running evaluations will bring
// (a point next to a running one adds little). The study's budget is
// global: its initial design plus Options.Iters × Options.Batch
// evaluations, whatever the number of workers (Resume with
// ResumeOptions.Iters changes it). With Options.AutoBatch the proposer sizes each proposal by
// information gain (acq.Sizer), at most the idle slots. The proposer
// stores each proposal's Record once its trials have all finished.

//
// Only acquisitions that declare they account for the running trials
// (acq.PendingAware, AsyncAcquisitions) run in worker mode: CheckAsync, in
// capabilities.go, refuses the others.

// Defaults of WorkerOptions.
const (
	DefaultWorkerPoll = 100 * time.Millisecond
	// reclaimEvery bounds how often one worker looks for lost workers'
	// trials.
	reclaimEvery = 250 * time.Millisecond
)

// WorkerOptions configure RunWorker. The zero value runs one evaluation at
// a time with the built-in acquisition the study names, 30 s leases and
// no logging.
type WorkerOptions struct {
	// Parallel is the number of concurrent evaluations (slots). Zero means
	// 1; at most MaxParallel.
	Parallel int
	// LeaseTTL is how long a taken trial (and this worker's registration)
	// lasts after each heartbeat (every LeaseTTL/3). Zero means 30 s.
	LeaseTTL time.Duration
	// Poll is how long an idle worker waits before looking at the queue
	// again (±50% jitter). Zero means DefaultWorkerPoll.
	Poll time.Duration
	// Logger receives progress (zero value: discard).
	Logger zerolog.Logger
	// OnTrial is called after each outcome this worker records.
	OnTrial func(Trial)
	// OnIteration, if set, is called in iteration order with the study's
	// iteration records as they are stored, from the study's first BO
	// iteration on. The proposer stores each proposal's record once its
	// trials have all finished, whether or not OnIteration is set (the web
	// view shows their recommendation and regret). RunWorker returns after
	// passing every record stored by then.
	OnIteration func(Record)
}

// WorkerResult summarizes what one worker did.
type WorkerResult struct {
	Evaluated int // outcomes recorded
	Late      int // values reported after the lease was lost (kept as attempts)
	Proposed  int // points this worker proposed
	Done      bool
}

// worker is RunWorker's state.
type worker struct {
	db       store.Storage
	id       int64
	name     string
	h        store.Holder
	o        WorkerOptions
	pool     pool          // evaluates (one attempt per lease: the queue retries)
	grace    time.Duration // Options.Grace
	attempts int           // Options.Retries + 1: a trial's attempts before it fails
	budget   int           // Init + Iters × Batch evaluations (plus the imported trials), refreshed (see refreshBudget)
	design   int
	imported int // trials a warm start imported (they use up no budget)
	lastIter int // last iteration record passed to OnIteration
	log      zerolog.Logger
	obj      sdk.Objective
	pruner   prune.Pruner // nil: no early stopping
	minimize bool
	info     sdk.Info // the stored study's objective
	fullStep int      // the last step of a full evaluation (Study.fullStep)
	prop     proposerRole
	reclaim  sync.Mutex
	lastRec  time.Time
	lastBeat time.Time    // the last heartbeat that went through (heartbeat's own)
	cutOff   atomic.Int64 // when this process last found itself cut off (Unix ns; see mayReclaim)

	mu         sync.Mutex
	res        WorkerResult
	unreported []*Trial   // outcomes the database could not take, to report again (report)
	rng        *rand.Rand // poll jitter
}

// RunWorker joins the stored study name as a worker and evaluates its
// trials with obj until the study is complete (its whole budget evaluated)
// or ctx is cancelled; see the comment on worker mode at the top of this
// file. A study a single process is running (its lease held by a
// non-worker) gives a *LeaseHeldError. Cancelling ctx stops taking
// trials; evaluations under way get Options.Grace to finish, then go back
// to the queue.
func RunWorker(ctx context.Context, storage *Storage, name string, obj sdk.Objective, o WorkerOptions) (*WorkerResult, error) {
	r, err := runWorker(ctx, storage.store(), name, obj, o, false)
	return r, publicErr(err)
}

// runWorker is RunWorker for an objective that Start may already have
// configured with the study's parameters (configured: not again).
func runWorker(ctx context.Context, db store.Storage, name string, obj sdk.Objective, o WorkerOptions, configured bool) (*WorkerResult, error) {
	if o.Parallel <= 0 {
		o.Parallel = 1
	}
	if o.Parallel > MaxParallel {
		return nil, fmt.Errorf("worker on study %q: %d concurrent evaluations exceed the limit of %d (MaxParallel)", name, o.Parallel, MaxParallel)
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = leaseTTL
	}
	if o.Poll <= 0 {
		o.Poll = DefaultWorkerPoll
	}
	w, err := newWorker(ctx, db, name, obj, o, configured)
	if err != nil {
		return nil, err
	}
	if err := db.RegisterWorker(ctx, w.id, w.h, o.Parallel, o.LeaseTTL); err != nil {
		w.prop.close()
		return nil, err
	}
	defer func() {
		if time.Since(lastUnavailable(db)) < releaseTimeout {
			// The server was down a moment ago: the registration expires
			// with its TTL anyway, and waiting to remove it delays the exit.
			return
		}
		c, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		db.UnregisterWorker(c, w.id, w.h)
	}()
	// Deferred after the registration so that it runs before it: a worker
	// gives up the proposer's lease while still registered, never holding
	// it unregistered (a worker starting then would take this process for
	// a single-process run and refuse the study).
	defer w.prop.close()
	hbCtx, stopHB := context.WithCancel(context.Background())
	defer stopHB()
	go w.heartbeat(hbCtx)
	if o.OnIteration != nil {
		recDone := make(chan struct{})
		defer func() { <-recDone }()
		defer stopHB() // stops the records' poll too, then the last flush
		go func() { defer close(recDone); w.followRecords(hbCtx) }()
	}
	evalCtx, stop := graceContext(ctx, w.grace)
	defer stop()
	e := engine{q: w, p: w, slots: o.Parallel, transient: true, log: w.log}
	first := e.run(ctx, evalCtx)
	w.mu.Lock()
	res, lost := w.res, len(w.unreported)
	w.mu.Unlock()
	if lost > 0 {
		w.log.Warn().Int("evaluations", lost).Msg("leaving without reporting evaluations the database could not take; their trials are evaluated again when their leases expire")
	}
	if first == nil && ctx.Err() != nil {
		first = fmt.Errorf("worker on study %q interrupted: %w", name, context.Cause(ctx))
	}
	if first == nil && o.OnIteration != nil {
		w.awaitRecords(ctx, recordsWait)
	}
	return &res, first
}

func newWorker(ctx context.Context, db store.Storage, name string, obj sdk.Objective, o WorkerOptions, configured bool) (*worker, error) {
	opts, info, err := storedSettingsOf(ctx, db, name)
	if err != nil {
		return nil, err
	}
	if err := CheckAsync(opts.Acquisition); err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	if opts.MultiFidelity.Enabled {
		return nil, fmt.Errorf("study %q is multi-fidelity: it runs in one process (tesbo-host run or resume), not as workers", name)
	}
	row, err := db.Study(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		return nil, err
	}
	if err := checkNotSingle(ctx, db, row.ID); err != nil {
		return nil, err
	}
	if err := checkRunAlone(ctx, db, name); err != nil {
		return nil, err
	}
	if _, err := NewSpace(info.Params); err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	pruner, err := opts.Pruning.pruner(info)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	if opts.Pruning.Model == PruneModelCurve {
		return nil, fmt.Errorf("study %q: the pruner's curve model runs in one process, not as workers (run it with tesbo-host run or resume; for workers, create the study with Pruning.Model = PruneModelLast, --pruner-model last)", name)
	}
	if opts.Grace == 0 {
		opts.Grace = DefaultGrace
	}
	h := store.NewHolder()
	log := o.Logger.With().Str("study", name).Str("worker", h.Name()).Logger()
	if !configured {
		if err := attachObjective(ctx, obj, name, info, opts); err != nil {
			return nil, err
		}
	}
	ts, err := db.Trials(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	imp := importedCount(ts)
	w := &worker{fullStep: fullStepOf(info, opts.Pruning), db: db, id: row.ID, name: name, h: h, o: o, log: log, obj: obj, pruner: pruner, minimize: info.Minimize, info: info,
		pool: newPool(opts, info, log), grace: opts.Grace, attempts: opts.Retries + 1,
		budget: evaluationBudget(opts.Init, opts.Iters, opts.Batch) + imp, design: opts.Init, imported: imp}
	w.prop = proposerRole{w: w}
	w.rng = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	return w, nil
}

// singleWait is how long a starting worker waits, before refusing the
// study, for a lease held by a live non-worker to be released or its
// holder to register as a worker: `tesbo-host run` on PostgreSQL creates
// the study under its lease and only then joins it as a worker, so a worker
// started at once would otherwise meet that lease and refuse a study it can
// join a moment later. A variable for tests.
var singleWait = 5 * time.Second

// checkNotSingle refuses a study that one process runs on its own (its
// lease is held by a live holder that is not a registered worker), after
// waiting up to singleWait for that to change.
func checkNotSingle(ctx context.Context, db store.Storage, id int64) error {
	deadline := time.Now().Add(singleWait)
	for {
		err := heldBySingle(ctx, db, id)
		var held *store.LeaseHeldError
		if !errors.As(err, &held) || !time.Now().Before(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(DefaultWorkerPoll):
		}
	}
}

// heldBySingle returns the *LeaseHeldError of a study whose lease a
// live non-worker holds, nil when nobody or a worker holds it.
func heldBySingle(ctx context.Context, db store.Storage, id int64) error {
	err := db.CheckLease(ctx, id)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) {
		return err
	}
	// Any registration counts, expired or not: a proposer whose heartbeat
	// is late on a loaded machine is still a worker.
	isWorker, werr := db.WorkerRegistered(ctx, id, held.Host, held.PID)
	if werr != nil {
		return werr
	}
	if isWorker {
		return nil // the proposer is a worker: join it
	}
	return publicErr(held)
}

// liveWorkers reports whether workers are working on the stored study
// name (so that a second process should join them as a worker).
func liveWorkers(ctx context.Context, db store.Storage, name string) (bool, error) {
	row, err := db.Study(ctx, name)
	if err != nil {
		return false, err
	}
	ws, err := db.Workers(ctx, row.ID)
	return len(ws) > 0, err
}

// heartbeat renews the worker's registration and trial leases every
// TTL/3; failures are logged (the leases have two more beats to spare).
func (w *worker) heartbeat(ctx context.Context) {
	tick := time.NewTicker(w.o.LeaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := w.db.Heartbeat(ctx, w.id, w.h, w.o.Parallel, w.o.LeaseTTL)
		if err != nil && ctx.Err() == nil {
			w.log.Warn().Err(err).Msg("heartbeat failed; trying again")
		}
		if now := time.Now(); err == nil {
			// A beat later than two of its intervals means this process
			// could not renew its leases for a while (database down, or
			// the process paused): others may have been cut off too.
			if !w.lastBeat.IsZero() && now.Sub(w.lastBeat) > 2*w.o.LeaseTTL/3 {
				w.cutOff.Store(now.UnixNano())
			}
			w.lastBeat = now
		}
	}
}

// take leases the next pending trial of the stored queue, returning lost
// workers' trials to it when it is empty.
func (w *worker) take(ctx context.Context) (*Trial, error) {
	if err := w.flushReports(ctx); err != nil {
		return nil, err
	}
	t, err := leaseTrial(ctx, w.db, w.id, w.h, w.o.LeaseTTL)
	if err == nil && t == nil {
		w.maybeReclaim(ctx)
	}
	return t, err
}

// waiter waits a poll period (±50%): other workers change the queue.
func (w *worker) waiter() func(ctx context.Context) {
	return func(ctx context.Context) {
		w.mu.Lock()
		wait := time.Duration(float64(w.o.Poll) * (0.5 + w.rng.Float64()))
		w.mu.Unlock()
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
}

// propose is the proposer role's (asynchronous) policy.
func (w *worker) propose(ctx context.Context) (int, error) { return w.prop.propose(ctx) }

// done reports whether the study is complete (and notes it in the result).
func (w *worker) done(ctx context.Context) (bool, error) {
	done, err := w.studyDone(ctx)
	if done {
		w.mu.Lock()
		w.res.Done = true
		w.mu.Unlock()
	}
	return done, err
}

// studyDone reports whether the whole budget is issued and finished.
func (w *worker) studyDone(ctx context.Context) (bool, error) {
	p, r, f, err := w.db.QueueCounts(ctx, w.id)
	if err != nil {
		return false, err
	}
	if p != 0 || r != 0 {
		return false, nil
	}
	budget, err := w.refreshBudget(ctx)
	return f >= budget, err
}

// refreshBudget re-reads the study's budget, which setWorkerBudget (resume
// --iters) may have raised while the workers run.
func (w *worker) refreshBudget(ctx context.Context) (int, error) {
	o, _, err := storedSettingsOf(ctx, w.db, w.name)
	if err != nil {
		return 0, err
	}
	w.mu.Lock()
	imported := w.imported
	w.mu.Unlock()
	if imported == 0 && len(o.WarmStart) > 0 && o.WarmStartMode == WarmObservations {
		// A study whose creator stopped before storing its warm start's
		// imports gets them from its first proposer (openStudy's
		// importMissing), maybe after this worker joined: they do not use
		// up the budget.
		ts, err := w.db.Trials(ctx, w.id)
		if err != nil {
			return 0, err
		}
		imported = importedCount(ts)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.imported = imported
	w.budget = evaluationBudget(w.design, o.Iters, o.Batch) + w.imported
	return w.budget, nil
}

// setWorkerBudget sets the iteration budget of the stored study name, a
// study workers share, to iters: a new total, as OpenStudy's Options.Iters,
// so that the study runs Init + iters × Batch evaluations. Workers already
// running take it up at their next proposal. A budget below the trials
// already issued is refused.
func setWorkerBudget(ctx context.Context, db store.Storage, name string, iters int) error {
	row, st, err := loadSettings(ctx, db, name)
	if err != nil {
		return err
	}
	o := st.Options
	if iters == o.Iters {
		return nil
	}
	o.Iters = iters
	if err := o.validate(); err != nil {
		return fmt.Errorf("study %q: %w", name, err)
	}
	ts, err := db.Trials(ctx, row.ID)
	if err != nil {
		return err
	}
	design := 0
	for _, t := range ts {
		if t.Iteration == 0 {
			design++
		}
	}
	if budget := evaluationBudget(max(design, o.Init), iters, o.Batch); budget < len(ts)-importedCount(ts) {
		return fmt.Errorf("study %q has issued %d trials, more than the %d of a budget of %d iterations × batch %d (plus its initial design): the budget is the new total, not a number to add", name, len(ts), budget, iters, o.Batch)
	}
	settings, err := encodeSettings(o, st.Info)
	if err != nil {
		return err
	}
	return db.UpdateSettings(ctx, row.ID, settings)
}

// minLostAttempts is the fewest attempts a trial gets before lost workers
// fail it ("worker lost"), whatever Options.Retries.
const minLostAttempts = 3

// lostAttempts is how many attempts a trial gets before a lost worker
// fails it: its attempts (Retries + 1), at least minLostAttempts. A lost worker is rarely
// the trial's doing — a plugin's crash or hang is caught by the worker
// and counted as the trial's failure — but a host killed, restarted or
// cut off, so a coordinator killed with -9 and resumed re-runs its
// trials; a trial that keeps taking its workers down still fails.
func lostAttempts(attempts int) int { return max(attempts, minLostAttempts) }

// maybeReclaim returns lost workers' trials to the queue, at most every
// reclaimEvery per process.
func (w *worker) maybeReclaim(ctx context.Context) {
	if !w.reclaim.TryLock() {
		return
	}
	defer w.reclaim.Unlock()
	if time.Since(w.lastRec) < reclaimEvery {
		return
	}
	w.lastRec = time.Now()
	if !w.mayReclaim() {
		return
	}
	n, err := w.db.ReclaimTrials(ctx, w.id, lostAttempts(w.attempts))
	if err != nil {
		w.log.Warn().Err(err).Msg("could not reclaim lost workers' trials")
	} else if n > 0 {
		w.log.Warn().Int("trials", n).Msg("reclaimed the trials of lost workers")
	}
}

// mayReclaim reports whether this process may take expired leases: not
// within a lease's TTL of finding itself cut off from the database (a
// store call that found the server unreachable, or a late heartbeat).
// An outage longer than the TTL expires every lease, live workers' as
// well as dead ones'; the live ones renew theirs within a heartbeat
// interval (TTL/3) of the server coming back, and reclaiming before that
// threw their finished evaluations away and ran them again.
func (w *worker) mayReclaim() bool {
	cut := time.Unix(0, w.cutOff.Load())
	if lu := lastUnavailable(w.db); lu.After(cut) {
		cut = lu
	}
	return time.Since(cut) >= w.o.LeaseTTL
}

// lastUnavailable is when db last found its server unreachable
// (store.DB's LastUnavailable; the zero time for stores without one).
func lastUnavailable(db store.Storage) time.Time {
	if lu, ok := db.(interface{ LastUnavailable() time.Time }); ok {
		return lu.LastUnavailable()
	}
	return time.Time{}
}

// evaluate runs one leased trial and reports its outcome; a trial
// abandoned because the worker is stopping is left to be reclaimed.
func (w *worker) evaluate(ctx, evalCtx context.Context, t *Trial) error {
	started := time.Now()
	var r sdk.Result
	var err error
	var curve *trialCurve
	for reruns := 0; ; reruns++ {
		curve = w.newCurve(ctx, t)
		r, err = w.pool.call(evalCtx, w.obj, t.X, curve)
		if evalCtx.Err() != nil {
			return nil
		}
		// As Run's evaluations (pool.evalTrial): one stopped by another's
		// fault (or a pause past its limit) did nothing wrong and runs
		// again, not counted as an attempt, at most maxNeighbourReruns times.
		if !neighbourFault(err) || reruns == maxNeighbourReruns {
			break
		}
		if ctx.Err() != nil {
			return nil // leaving: the trial goes back to the queue
		}
		w.log.Info().Int("trial", t.ID).Err(err).Msg("re-running the evaluation, which did nothing wrong (not counted as an attempt)")
	}
	if stopsRun(err) {
		return fmt.Errorf("trial %d: %w", t.ID, err) // back to the queue as the worker leaves
	}
	err = valueError(r, err, w.pool.info)
	keepMeta(&r, t.ID, w.log)
	t.EvalSeconds, t.StartedAt = time.Since(started).Seconds(), started
	var pruned bool
	t.Intermediates, pruned = curve.close()
	last, stopped := stoppedEarly(t.Intermediates, pruned, w.fullStep)
	switch {
	case err != nil:
		t.Status, t.Error = Failed, store.CleanError(err.Error())
		w.log.Warn().Int("trial", t.ID).Int("attempt", t.Attempts).Err(err).Msg("evaluation failed")
	case stopped:
		t.Status, t.Value, t.Meta = Pruned, last, r.Meta
	default:
		t.Status, t.Value, t.Outputs, t.Meta = Complete, resultValue(w.info, r), r.Outputs, r.Meta
	}
	return w.report(ctx, t)
}
