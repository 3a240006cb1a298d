package host

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/tesbo/tesbo/store"
)

// recordsWait bounds how long a worker whose study is done waits for the
// proposer to store the last iterations' records.
const recordsWait = 10 * time.Second

// awaitRecords waits, at most wait, until every stored iteration has its
// record: the study is done when its last evaluation is reported, and
// the proposer (maybe another process) stores that iteration's record
// after; a worker leaving at once missed the last records in its
// OnIteration (tesbo-host worker --json).
func (w *worker) awaitRecords(ctx context.Context, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		its, err := w.db.Iterations(ctx, w.id)
		if err != nil {
			return
		}
		missing := false
		for _, it := range its {
			missing = missing || (it.Iteration >= 1 && it.Record == nil)
		}
		if !missing {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(max(w.o.Poll, 20*time.Millisecond)):
		}
	}
}

// followRecords passes the study's stored iteration records to
// OnIteration in order, polling until ctx ends, then once more.
func (w *worker) followRecords(ctx context.Context) {
	every := max(5*w.o.Poll, 200*time.Millisecond)
	for {
		done := ctx.Err() != nil
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		its, err := w.db.Iterations(c, w.id)
		cancel()
		if err != nil {
			w.log.Warn().Err(err).Msg("could not read the iteration records")
		}
		for _, it := range its {
			if it.Iteration != w.lastIter+1 || it.Record == nil {
				if it.Iteration > w.lastIter {
					break // records come in order: wait for this one
				}
				continue
			}
			var r Record
			if err := json.Unmarshal(it.Record, &r); err != nil {
				w.log.Warn().Err(err).Int("iter", it.Iteration).Msg("bad stored record")
				break
			}
			w.lastIter = it.Iteration
			w.o.OnIteration(r)
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
	}
}

// reportGrace is how long a leaving worker (its context done) still
// tries to report an outcome to a database that is down: the store
// retries a write for minutes (store.DefaultBusyRetry), far past the
// 10–90 s a service manager or container runtime waits between SIGTERM
// and SIGKILL.
var reportGrace = 5 * time.Second

// report stores the outcome of trial t. One the database could not take
// (its server down past the store's retries) is kept and reported again
// before the next lease (flushReports), not dropped: dropped, the trial
// stayed running under this live worker, whose heartbeat kept its lease,
// and the study never finished. A signal does not stop the report, but
// once ctx is done it gets reportGrace more: a worker leaving while the
// database is down leaves the trial to be leased again when its lease
// expires.
func (w *worker) report(ctx context.Context, t *Trial) error {
	rctx, cancel := outlive(ctx, reportGrace)
	defer cancel()
	ok, rerr := reportTrial(rctx, w.db, w.id, w.h, t, w.attempts)
	switch {
	case rerr != nil && ctx.Err() != nil:
		w.log.Warn().Int("trial", t.ID).Err(rerr).Msg("leaving without reporting the evaluation; the trial is evaluated again when its lease expires")
	case errors.Is(rerr, store.ErrUnavailable):
		w.mu.Lock()
		w.unreported = append(w.unreported, t)
		w.mu.Unlock()
		w.log.Warn().Int("trial", t.ID).Err(rerr).Msg("could not report the evaluation; it is kept and reported again when the database is back")
	}
	if rerr != nil {
		return rerr
	}
	w.mu.Lock()
	if ok {
		w.res.Evaluated++
	} else {
		w.res.Late++
		w.log.Warn().Int("trial", t.ID).Msg("reported after losing the trial's lease: kept as an attempt only")
	}
	w.mu.Unlock()
	if ok && w.o.OnTrial != nil {
		w.o.OnTrial(*t)
	}
	return nil
}

// outlive returns a context that is not done when ctx is, but grace
// after it (or when its cancel is called).
func outlive(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return c, func() { stop(); cancel() }
}

// flushReports reports again the outcomes the database could not take
// (report), oldest first; the first that fails again stops the flush and
// is returned (the engine waits for the database and tries again).
func (w *worker) flushReports(ctx context.Context) error {
	w.mu.Lock()
	pending := w.unreported
	w.unreported = nil
	w.mu.Unlock()
	for i, t := range pending {
		if err := w.report(ctx, t); err != nil {
			w.mu.Lock()
			// report kept t again when the server is still down.
			w.unreported = append(w.unreported, pending[i+1:]...)
			w.mu.Unlock()
			return err
		}
	}
	return nil
}
