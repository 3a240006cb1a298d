package host

import (
	"context"
	"fmt"
	"time"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// evalStats describes how an evaluation went (zero for Tell).
type evalStats struct {
	attempts int
	started  time.Time
	seconds  float64
}

// Tell records the outcome of trial trialID: its value, or the error that
// made it fail (err != nil). A NaN or infinite value is recorded as a
// failure. Failed trials are kept but never shown to the GP. ctx bounds the
// write to the study's database.
func (s *Study) Tell(ctx context.Context, trialID int, value float64, err error) error {
	if m := len(s.info.Outputs); m > 0 && err == nil {
		return fmt.Errorf("tell trial %d: objective %s declares %d outputs: tell them with TellOutputs", trialID, s.info.Name, m)
	}
	return s.TellResult(ctx, trialID, sdk.Result{Value: value}, err)
}

// TellResult is Tell with the metadata of an sdk.Result.
func (s *Study) TellResult(ctx context.Context, trialID int, r sdk.Result, err error) error {
	return s.finish(ctx, trialID, r, err, evalStats{})
}

func (s *Study) finish(ctx context.Context, id int, r sdk.Result, evalErr error, st evalStats) error {
	s.mu.Lock()
	if id < 0 || id >= len(s.trials) || s.trials[id].Status.Done() {
		s.mu.Unlock()
		return fmt.Errorf("tell trial %d: %w", id, ErrNotInFlight)
	}
	t := s.trials[id]
	evalErr = valueError(r, evalErr, len(s.info.Outputs))
	if evalErr != nil {
		t.Status, t.Error, t.Value = Failed, store.CleanError(evalErr.Error()), 0
	} else {
		t.Status, t.Value, t.Outputs, t.Meta = Complete, resultValue(s.info, r), r.Outputs, r.Meta
	}
	t.Attempts = max(st.attempts, 1)
	if !st.started.IsZero() {
		t.StartedAt = st.started
	}
	t.EvalSeconds = st.seconds
	t.FinishedAt = time.Now()
	if s.db != nil {
		if err := finishTrial(ctx, s.db, s.id, &t); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.trials[id] = t
	if t.Status == Complete {
		s.version++
	}
	s.mu.Unlock()
	s.cbMu.Lock()
	if s.opts.OnTrial != nil {
		s.opts.OnTrial(t)
	}
	s.cbMu.Unlock()
	return nil
}

// start marks a trial running (attempt counts from 1).
func (s *Study) start(ctx context.Context, id, attempt int, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trials[id].Status.Done() {
		return fmt.Errorf("start trial %d: %w", id, ErrNotInFlight)
	}
	if s.db != nil {
		if err := s.db.StartTrial(ctx, s.id, id, attempt, at); err != nil {
			return err
		}
	}
	s.trials[id].Status, s.trials[id].Attempts, s.trials[id].StartedAt = Running, attempt, at
	return nil
}
