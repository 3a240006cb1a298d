package host

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

// Several outputs (sdk.Info.Outputs): an objective may return several named
// values from one evaluation, each an objective to maximize or minimize or
// an outcome constraint. This file holds how their values are checked and
// told; multimodel.go fits one GP per output and asks the acquisition
// (acq.MultiProposer), multirecord.go reports the Pareto set.

// resultValue is the Value a trial of r keeps: r.Value for one output, else
// the first objective output's value (so that views of one value, such as
// a study's value range, show something meaningful).
func resultValue(info sdk.Info, r sdk.Result) float64 {
	objs := info.Objectives()
	if len(objs) == 0 || len(r.Outputs) != len(info.Outputs) {
		return r.Value
	}
	return r.Outputs[objs[0]]
}

// TellOutputs records the outcome of trial trialID of a study whose
// objective declares several outputs: one value per output, in the
// order of sdk.Info.Outputs, or the error that made it fail.
func (s *Study) TellOutputs(ctx context.Context, trialID int, outputs []float64, err error) error {
	if len(s.info.Outputs) == 0 && err == nil {
		return fmt.Errorf("tell trial %d: objective %s returns one value, declaring no outputs: tell it with Tell", trialID, s.info.Name)
	}
	if m := len(s.info.Outputs); err == nil && len(outputs) != m {
		// The caller's mistake, not the evaluation's: the trial stays in
		// flight to be told again (a NaN output is the evaluation's
		// failure, recorded as such).
		return fmt.Errorf("tell trial %d: %w: got %d, objective %s declares %d (in Info.Outputs' order); the trial is still in flight", trialID, sdk.ErrOutputCount, len(outputs), s.info.Name, m)
	}
	return s.TellResult(ctx, trialID, sdk.Result{Outputs: outputs}, err)
}

// AttachOutputs is Attach for a study whose objective declares several
// outputs: x (native units) was evaluated outside the study with the
// given outputs, one per sdk.Info.Outputs entry.
func (s *Study) AttachOutputs(ctx context.Context, x []float64, outputs []float64) (Trial, error) {
	if len(s.info.Outputs) == 0 {
		return Trial{}, fmt.Errorf("attach: objective %s returns one value, declaring no outputs: attach it with Attach", s.info.Name)
	}
	return s.attachResult(ctx, x, sdk.Result{Outputs: outputs})
}

// attachResult adds x with the result r as a complete external trial (Attach).
func (s *Study) attachResult(ctx context.Context, x []float64, r sdk.Result) (Trial, error) {
	if m := len(s.info.Outputs); m == 0 && (math.IsNaN(r.Value) || math.IsInf(r.Value, 0)) {
		return Trial{}, fmt.Errorf("attach: value %v is not finite", r.Value)
	} else if err := valueError(r, nil, s.info); err != nil {
		return Trial{}, fmt.Errorf("attach: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.issueExternal(ctx, x)
	if err != nil {
		return Trial{}, fmt.Errorf("attach: %w", err)
	}
	t.Status, t.Value, t.Outputs, t.Attempts, t.FinishedAt = Complete, resultValue(s.info, r), r.Outputs, 1, time.Now()
	if s.db != nil {
		if err := finishTrial(ctx, s.db, s.id, &t); err != nil {
			return Trial{}, fmt.Errorf("attach: %w", err)
		}
	}
	s.trials[t.ID] = t
	s.version++
	return t, nil
}
