package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// ExternalIteration is the Iteration of the trials added by Attach and
// Enqueue rather than proposed by the study: they belong to no BO
// iteration and use up none of the initial design.
const ExternalIteration = -1

// ErrNoEvaluations is returned by Recommend while no evaluation has
// completed.
var ErrNoEvaluations = errors.New("no completed evaluations yet")

// Attach adds a point x (native units) evaluated outside the study, with
// its value, as a complete trial of ExternalIteration: it is stored, shown
// to the GP from the next Ask on, and kept on resume. x must lie in the
// space (Int coordinates integral) and value must be finite. Attaching
// uses up neither the initial design nor a BO iteration. With a database
// the trial is written in two steps (added, then finished); a process
// stopped between them leaves it in flight, to be evaluated like an
// enqueued point.
func (s *Study) Attach(ctx context.Context, x []float64, value float64) (Trial, error) {
	if len(s.info.Outputs) > 0 {
		return Trial{}, fmt.Errorf("attach: objective %s declares %d outputs: attach them with AttachOutputs", s.info.Name, len(s.info.Outputs))
	}
	return s.attachResult(ctx, x, sdk.Result{Value: value})
}

// Enqueue adds the point x (native units) as a pending trial of
// ExternalIteration that is asked next: the next Ask returns the enqueued
// trials (at most q of them, in the order they were enqueued) before any
// initial-design or proposed point, and Run evaluates them before it asks
// for more. Like any trial in flight it is shown to the acquisition as
// pending meanwhile. x must lie in the space (Int coordinates integral).
// An enqueued trial not yet told when the process stops is in flight when
// the study is reopened (see InFlight), not enqueued again.
func (s *Study) Enqueue(ctx context.Context, x []float64) (Trial, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.issueExternal(ctx, x)
	if err != nil {
		return Trial{}, fmt.Errorf("enqueue: %w", err)
	}
	s.queue = append(s.queue, t.ID)
	return t, nil
}

// issueExternal records the point x as a new pending trial of
// ExternalIteration, keeping x exactly as given (but for the inactive
// parameters of a conditional space, which become NaN).
func (s *Study) issueExternal(ctx context.Context, x []float64) (Trial, error) {
	u, err := s.space.ToUnit(x)
	if err != nil {
		return Trial{}, err
	}
	index := 0
	for _, t := range s.trials {
		if t.Iteration == ExternalIteration {
			index++
		}
	}
	if index >= MaxTrials {
		return Trial{}, fmt.Errorf("the study holds %d attached or enqueued trials, the most it may", index)
	}
	t := Trial{ID: len(s.trials), Iteration: ExternalIteration, Index: index,
		X: s.space.activeOnly(x), U: u, Status: Pending, CreatedAt: time.Now(), Names: s.space.names}
	if s.db != nil {
		if err := addBatch(ctx, s.db, s.id, store.Iteration{Iteration: ExternalIteration}, []Trial{t}); err != nil {
			return Trial{}, err
		}
	}
	s.trials = append(s.trials, t)
	return t, nil
}

// dequeue returns up to q (q = 0: all) enqueued trials still in flight,
// removing them from the queue.
func (s *Study) dequeue(q int) []Trial {
	var out []Trial
	for len(s.queue) > 0 && (q == 0 || len(out) < q) {
		id := s.queue[0]
		s.queue = s.queue[1:]
		if t := s.trials[id]; !t.Status.Done() {
			out = append(out, t)
		}
	}
	return out
}

// OpenOrCreate opens the study o.Name in o.DB when it exists (as
// OpenStudy, with its stored settings) and otherwise creates it (as
// NewStudy): Optuna's load_if_exists. created reports which. An existing
// study must have been made for the same objective (info's name and
// parameters); a study created meanwhile by another process is opened.
func OpenOrCreate(ctx context.Context, info sdk.Info, o Options) (s *Study, created bool, err error) {
	if o.DB == nil || o.Name == "" {
		return nil, false, errors.New("open or create: Options.DB and Options.Name are required (without them there is nothing to open)")
	}
	for range 2 {
		s, err = openMatching(ctx, info, o)
		if !errors.Is(err, store.ErrNotFound) {
			return s, false, err
		}
		s, err = NewStudy(ctx, info, o)
		if !errors.Is(err, store.ErrExists) {
			return s, err == nil, err
		}
	}
	return nil, false, err
}

// openMatching opens study o.Name and checks that it studies info's
// objective.
func openMatching(ctx context.Context, info sdk.Info, o Options) (*Study, error) {
	s, err := OpenStudy(ctx, o.DB, o.Name, o)
	if err != nil {
		return nil, err
	}
	if s.info.Name != info.Name {
		err = fmt.Errorf("study %q studies objective %s, not %s: use another name", o.Name, s.info.Name, info.Name)
	} else if err = sameSpace(s.info.Params, info.Params); err != nil {
		err = fmt.Errorf("study %q does not match objective %s: %w", o.Name, info.Name, err)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}
