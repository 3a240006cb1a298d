package host

import (
	"context"
	"sync"

	"github.com/tesbo/tesbo/sdk"
)

// localEngine is a single process's queue and proposal policy (see
// engine.go): the study's own trials in flight, evaluated in place with
// retries, and a synchronous policy — the next batch only when nothing is
// in flight.
type localEngine struct {
	s       *Study
	obj     sdk.Objective
	pool    pool
	evalCtx context.Context // records are made under it, like the evaluations

	proposeMu sync.Mutex // one proposal at a time; guards toReport and last
	toReport  []Trial    // trials whose iterations may be ready to record
	last      *Record    // the latest record passed on

	mu      sync.Mutex
	taken   map[int]bool  // trials a slot has taken
	changed chan struct{} // closed (and replaced) when the queue changes
}

// newLocalEngine is study s's local worker, whose records are made under
// evalCtx. The trials in flight (re-run on resume) come first.
func newLocalEngine(s *Study, obj sdk.Objective, evalCtx context.Context) *localEngine {
	return &localEngine{s: s, obj: obj, pool: newPool(s.opts, s.info, s.log), evalCtx: evalCtx,
		toReport: s.InFlight(), last: s.lastRecord, taken: map[int]bool{}, changed: make(chan struct{})}
}

// emit passes records to Options.OnIteration, in order.
func (l *localEngine) emit(recs []Record) {
	s := l.s
	for i := range recs {
		l.last = &recs[i]
		s.callback("OnIteration", func() {
			if s.opts.OnIteration != nil {
				s.opts.OnIteration(recs[i])
			}
		})
	}
}

// take returns the first trial in flight that no slot has taken (none
// once ctx has ended: the trials left stay in flight for a later Run).
func (l *localEngine) take(ctx context.Context) (*Trial, error) {
	if ctx.Err() != nil {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.trials {
		if !t.Status.Done() && !l.taken[t.ID] {
			l.taken[t.ID] = true
			return &t, nil
		}
	}
	return nil, nil
}

// evaluate runs t with retries in place (Options.Retries, backoff), the
// study recording each attempt's start and the outcome.
func (l *localEngine) evaluate(ctx, evalCtx context.Context, t *Trial) error {
	err := l.pool.evalTrial(ctx, evalCtx, l.obj, *t, l.s)
	if err == nil {
		err = l.s.fidelityUnreported(t.ID)
	}
	l.notify()
	return err
}

// notify wakes the slots waiting for the queue to change.
func (l *localEngine) notify() {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *localEngine) waiter() func(ctx context.Context) {
	l.mu.Lock()
	ch := l.changed
	l.mu.Unlock()
	return func(ctx context.Context) {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
}

// propose asks for the next batch when nothing is in flight, after storing
// the records of the iterations just finished: the design's remaining
// points, else Options.Batch points (fewer when the budget has fewer
// left; with AutoBatch, as many as the acquisition decides, at most that).
func (l *localEngine) propose(ctx context.Context) (int, error) {
	l.proposeMu.Lock()
	defer l.proposeMu.Unlock()
	s := l.s
	s.mu.Lock()
	inFlight := len(s.inFlightLocked())
	q, more := s.nextBatchLocked()
	s.mu.Unlock()
	if inFlight > 0 {
		return 0, nil
	}
	recs, err := s.report(l.evalCtx, l.obj, l.toReport)
	if err != nil {
		return 0, err
	}
	l.emit(recs)
	l.toReport = nil
	if !more {
		return 0, nil
	}
	atMost := 0
	if s.opts.AutoBatch && q < s.opts.Batch {
		// The budget cuts this batch: the acquisition sizes it as an
		// uninterrupted longer study would, and the rest waits (Study.ask).
		q, atMost = s.opts.Batch, q
	}
	trials, err := s.ask(ctx, q, atMost)
	if err != nil {
		return 0, err
	}
	l.toReport = trials
	l.notify()
	return len(trials), nil
}

func (l *localEngine) done(context.Context) (bool, error) { return l.s.Done(), nil }
