package host

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// evalStats describes how an evaluation went (zero for Tell): with the
// intermediate values it reported, and whether the pruner stopped it.
type evalStats struct {
	attempts int
	started  time.Time
	seconds  float64
	curve    []Intermediate
	pruned   bool
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

// TellResult is Tell with the metadata of an sdk.Result. A trial whose
// intermediate values went to Report is recorded with them, as pruned
// (with the value told, its last one) when the pruner said stop.
func (s *Study) TellResult(ctx context.Context, trialID int, r sdk.Result, err error) error {
	var st evalStats
	s.mu.Lock()
	c := s.reportCurveLocked(trialID, false)
	s.mu.Unlock()
	st.curve, st.pruned = c.close()
	if err := s.finish(ctx, trialID, r, err, st); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.reports, trialID)
	s.mu.Unlock()
	return nil
}

// Report records an intermediate value of trial trialID, which the caller
// is evaluating (Ask/Tell: the form of sdk.Report for it), and says
// whether the study's pruner (Options.Pruning) wants the evaluation
// stopped. A caller told to stop tells the trial's last value, and Tell
// records the trial as pruned. Steps must increase; the values are kept
// with the trial's outcome also without a pruner. With a database each
// value and the decision are stored as they come (ctx bounds the write),
// so a study reopened mid-evaluation goes on from them (Trial.Stopping).
func (s *Study) Report(ctx context.Context, trialID, step int, value float64) (prune bool, err error) {
	s.mu.Lock()
	if err := s.tellableLocked(trialID); err != nil {
		s.mu.Unlock()
		return false, fmt.Errorf("report trial %d: %w", trialID, err)
	}
	c := s.reportCurveLocked(trialID, true)
	s.mu.Unlock()
	return c.report(step, value, func(p Intermediate, stop bool) error {
		return s.keepReport(ctx, trialID, p, stop)
	})
}

// reportCurveLocked returns the curve Report builds for trial id: this
// process's, else one holding what was stored (a reopened study), else,
// when create is set and the trial is in flight, a new one (nil
// otherwise).
func (s *Study) reportCurveLocked(id int, create bool) *trialCurve {
	if c := s.reports[id]; c != nil || id < 0 || id >= len(s.trials) {
		return c
	}
	t := s.trials[id]
	if t.Status.Done() || (len(t.Intermediates) == 0 && !create) {
		return nil
	}
	c := s.curveLocked(id)
	c.points, c.pruned = slices.Clone(t.Intermediates), t.Stopping
	if s.reports == nil {
		s.reports = map[int]*trialCurve{}
	}
	s.reports[id] = c
	return c
}

// keepReport stores a point Report takes (and whether the evaluation was
// told to stop), then shows it on the in-flight trial.
func (s *Study) keepReport(ctx context.Context, id int, p Intermediate, stop bool) error {
	if s.db != nil {
		if err := s.db.ReportIntermediate(ctx, s.id, id, store.Intermediate(p), stop); err != nil {
			return fmt.Errorf("report trial %d: %w", id, err)
		}
	}
	s.showReport(id, p, stop)
	return nil
}

// showReport adds a reported value (and the stop) to in-flight trial id.
func (s *Study) showReport(id int, p Intermediate, stop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &s.trials[id]
	t.Intermediates = append(t.Intermediates, p)
	t.Stopping = t.Stopping || stop
}

// tellableLocked says why trial id cannot be told or reported (an error
// wrapping ErrNotInFlight), nil when it can: there is no such trial, or
// it is already finished.
func (s *Study) tellableLocked(id int) error {
	switch {
	case id < 0 || id >= len(s.trials):
		return fmt.Errorf("%w: the study has no trial %d (its trials are 0 to %d)", ErrNotInFlight, id, len(s.trials)-1)
	case s.trials[id].Status.Done():
		return fmt.Errorf("%w: it is already %s", ErrNotInFlight, s.trials[id].Status)
	}
	return nil
}

func (s *Study) finish(ctx context.Context, id int, r sdk.Result, evalErr error, st evalStats) error {
	s.mu.Lock()
	if err := s.tellableLocked(id); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("tell trial %d: %w", id, err)
	}
	t := s.trials[id]
	evalErr = valueError(r, evalErr, s.info)
	keepMeta(&r, id, s.log)
	last, stopped := stoppedEarly(st.curve, st.pruned, s.fullStep())
	switch {
	case evalErr != nil:
		t.Status, t.Error, t.Value = Failed, store.CleanError(evalErr.Error()), 0
	case stopped:
		t.Status, t.Value, t.Meta = Pruned, last, keepFidelityStep(t.Meta, r.Meta)
	default:
		t.Status, t.Value, t.Outputs, t.Meta = Complete, resultValue(s.info, r), r.Outputs, keepFidelityStep(t.Meta, r.Meta)
	}
	t.Intermediates, t.Stopping = st.curve, false
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
	if t.Status.modelled() {
		s.version++
	}
	s.mu.Unlock()
	s.callback("OnTrial", func() {
		if s.opts.OnTrial != nil {
			s.opts.OnTrial(t)
		}
	})
	return nil
}

// fullStep is the last step of a full evaluation: the objective's
// MaxStep, else the pruner's max step (0: not known).
func (s *Study) fullStep() int {
	return fullStepOf(s.info, s.opts.Pruning)
}

// fullStepOf is Study.fullStep for an objective's Info and pruning
// settings.
func fullStepOf(info sdk.Info, p Pruning) int {
	if info.MaxStep > 0 {
		return info.MaxStep
	}
	return p.MaxStep
}

// callback runs f, which calls the caller's callback name
// (Options.OnTrial, OnIteration), one at a time (f reads the options
// under cbMu, which SetCallbacks writes them under). Callbacks run on the
// study's evaluation goroutines, where the caller's recover cannot reach:
// a panic is kept as cbErr, which Run returns when it ends, instead of
// taking the process down.
func (s *Study) callback(name string, f func()) {
	s.cbMu.Lock()
	defer s.cbMu.Unlock()
	defer func() {
		if p := recover(); p != nil && s.cbErr == nil {
			s.cbErr = fmt.Errorf("the callback Options.%s panicked: %v", name, p)
			s.log.Error().Err(s.cbErr).Msg("a callback panicked; Run returns it as its error when it ends")
		}
	}()
	f()
}

// start marks a trial running (attempt counts from 1); the values an
// earlier attempt or an Ask/Tell caller reported are dropped, as the
// attempt reports its own.
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
	t := &s.trials[id]
	t.Status, t.Attempts, t.StartedAt, t.Intermediates, t.Stopping = Running, attempt, at, nil, false
	delete(s.reports, id)
	return nil
}
