package host

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/store"
)

// The engine: every way of running a study — Study.Run in one process,
// RunWorker in many — is the same loop. Parallel evaluation slots each
// take a trial from the study's queue, evaluate it in the evaluation pool
// and report its outcome; a slot that finds the queue empty asks the
// proposal policy for new points; when the policy has none to give and the
// study's budget (Init + Iters × Batch evaluations) is finished, the slots
// stop. What differs is only where the queue lives and when the policy
// proposes:
//
//   - A worker (worker.go) takes trials from the stored queue that any
//     number of processes share (store.QueueStore.LeaseTrial), one attempt
//     per lease (the queue retries), and proposes asynchronously: as soon
//     as the queue is empty, as many points as there are idle slots over
//     all live workers, the running ones pending (worker_propose.go).
//   - A single process (Study.Run, localEngine below) is one local worker
//     on the study's own trials: it holds the study's lease, takes its
//     trials in flight in ID order, retries a failed attempt in place with
//     backoff, and proposes synchronously: a whole batch (Options.Batch
//     points, or the design) only when nothing is in flight, so that each
//     proposal sees every earlier outcome and the trials follow the seed
//     exactly. Its trials name no worker (`tesbo-host trials` shows the
//     column empty; RunWorker refuses such a study, see runalone.go).
//
// Ask and Tell are the same study state with the caller as evaluator.

// trialQueue is where an engine's slots take trials from.
type trialQueue interface {
	// take returns the next trial to evaluate, nil when there is none.
	take(ctx context.Context) (*Trial, error)
	// evaluate runs t in the evaluation pool and reports its outcome; a
	// trial abandoned because ctx ended stays in flight.
	evaluate(ctx, evalCtx context.Context, t *Trial) error
	// waiter returns a function that waits, until ctx ends, for the
	// queue to change after the call to waiter (or a poll period).
	waiter() func(ctx context.Context)
}

// proposalPolicy decides when new points are proposed, and how many.
type proposalPolicy interface {
	// propose issues new trials if the policy says so; it returns how many.
	propose(ctx context.Context) (int, error)
	// done reports whether the whole budget is issued and finished.
	done(ctx context.Context) (bool, error)
}

// engine runs slots evaluation slots over a queue and a policy.
type engine struct {
	q     trialQueue
	p     proposalPolicy
	slots int
	// transient: wait and try again on an unavailable or locked database
	// (workers, which outlive a PostgreSQL restart) rather than stop.
	transient bool
	log       zerolog.Logger
}

// errStudyDone ends a slot when the study is complete.
var errStudyDone = errors.New("study complete")

// run runs the slots until the study is done, ctx ends or a slot fails
// (the first error stops the other slots from taking trials; evaluations
// under way finish under evalCtx).
func (e *engine) run(ctx, evalCtx context.Context) error {
	loopCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, e.slots)
	var wg sync.WaitGroup
	for range e.slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.slot(loopCtx, evalCtx); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when no slot failed
}

// slot is one evaluation slot: take a trial, evaluate it, report it; when
// the queue is empty, propose (as the policy says) or wait.
func (e *engine) slot(ctx, evalCtx context.Context) error {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		err := e.step(ctx, evalCtx)
		if err == nil {
			backoff = 0
			continue
		}
		if errors.Is(err, errStudyDone) || ctx.Err() != nil {
			return nil
		}
		if !e.transient || (!errors.Is(err, store.ErrUnavailable) && !errors.Is(err, store.ErrLocked)) {
			return err
		}
		// The database is down or restarting: wait and try again.
		backoff = min(max(2*backoff, 100*time.Millisecond), 5*time.Second)
		e.log.Warn().Err(err).Dur("retry_in", backoff).Msg("database unavailable; retrying")
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
	}
	return nil
}

// step takes and evaluates one trial, or proposes, or waits for the queue
// to change.
func (e *engine) step(ctx, evalCtx context.Context) error {
	wait := e.q.waiter()
	t, err := e.q.take(ctx)
	if err != nil {
		return err
	}
	if t != nil {
		return e.q.evaluate(ctx, evalCtx, t)
	}
	n, err := e.p.propose(ctx)
	if err != nil || n > 0 {
		return err
	}
	done, err := e.p.done(ctx)
	if err != nil {
		return err
	}
	if done {
		return errStudyDone
	}
	wait(ctx)
	return nil
}
