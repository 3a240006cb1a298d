package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

// Record is the per-iteration output record (the CLI's --json
// lines, one per BO iteration):
//
//	{"iter":3,"evals":8,"batch":[[0.1,0.9]],"values":[-1.2],"best_value":-0.4,
//	 "best_x":[0.12,0.88],"regret":0.0031,"fit_s":0.02,"propose_s":0.31,"eval_s":0.001,
//	 "best_observed":-0.7,"best_observed_x":[0.1,0.93]}
//
// Iter counts from 1 after the initial design; Evals is the number of
// completed evaluations so far; Batch holds the iteration's points in native
// units and Values their values (null for a failed evaluation); BestX and
// BestValue are the recommendation x̄ and the objective's value there
// (null only while nothing has completed), which can go down as well as up
// as the model learns; BestObserved and BestObservedX are the best value
// observed so far (the largest, or the smallest for a minimizing
// objective; it never gets worse) and where; Regret is f* − f(x̄) (for a
// minimizing objective f(x̄) − f*) with f evaluated without noise when the
// objective implements sdk.NoiseFree, null when f* is unknown; FitS and
// ProposeS time the GP fit and the acquisition, EvalS the batch's
// evaluation (first start to last finish).
// A space with Categorical parameters adds "choices", "best_choices" and
// "best_observed_choices" (see the fields).
type Record struct {
	Iter      int         `json:"iter"`
	Evals     int         `json:"evals"`
	Batch     [][]float64 `json:"batch"`
	Values    []*float64  `json:"values"`
	BestValue *float64    `json:"best_value"`
	BestX     []float64   `json:"best_x"`
	Regret    *float64    `json:"regret"`
	FitS      float64     `json:"fit_s"`
	ProposeS  float64     `json:"propose_s"`
	EvalS     float64     `json:"eval_s"`

	BestObserved  *float64  `json:"best_observed"`
	BestObservedX []float64 `json:"best_observed_x"`

	// Stopped says, per trial of Batch, where an evaluation stopped early
	// (a pruner, or a lower fidelity) ended: its last reported [step,
	// value], null for a trial that ran in full or failed (whose Values
	// entry says which). Absent when no trial of the batch was stopped.
	Stopped []*[2]float64 `json:"stopped,omitempty"`

	// Choices name the Categorical coordinates of Batch, BestX and
	// BestObservedX (parameter name → choice name; the coordinates
	// themselves are the choices' indices). Empty when the space has no
	// Categorical.
	Choices             []map[string]string `json:"choices,omitempty"`
	BestChoices         map[string]string   `json:"best_choices,omitempty"`
	BestObservedChoices map[string]string   `json:"best_observed_choices,omitempty"`

	// MultiRecord is set for an objective with several outputs (then
	// BestObserved and Regret are null, and BestValue and BestX are the
	// best feasible trial's with one objective, else null).
	*MultiRecord
}

// ChoiceNames maps the Categorical parameters of params to the names of
// their choices at the native point x (nil when there are none).
func ChoiceNames(params []sdk.Param, x []float64) map[string]string {
	var m map[string]string
	for i, p := range params {
		if p.Kind == sdk.Categorical && i < len(x) && !math.IsNaN(x[i]) { // NaN: inactive
			if m == nil {
				m = map[string]string{}
			}
			m[p.Name] = p.Format(x[i])
		}
	}
	return m
}

// nameChoices fills rec's Choices fields from its points.
func nameChoices(rec *Record, params []sdk.Param) {
	if ChoiceNames(params, make([]float64, len(params))) == nil {
		return
	}
	for _, x := range rec.Batch {
		rec.Choices = append(rec.Choices, ChoiceNames(params, x))
	}
	rec.BestChoices = ChoiceNames(params, rec.BestX)
	rec.BestObservedChoices = ChoiceNames(params, rec.BestObservedX)
}

// report builds, stores and returns the records of the BO iterations that
// batch completed.
func (s *Study) report(ctx context.Context, obj sdk.Objective, batch []Trial) ([]Record, error) {
	seen := map[int]bool{}
	var recs []Record
	for _, t := range batch {
		it := t.Iteration
		if it < 1 || seen[it] {
			continue
		}
		seen[it] = true
		s.mu.Lock()
		info := s.iters[it]
		ts := s.iterationTrials(it)
		s.mu.Unlock()
		complete := true
		for _, tt := range ts {
			complete = complete && tt.Status.Done()
		}
		if !complete || info == nil || info.recorded {
			continue
		}
		rec, err := s.record(ctx, obj, it, info, ts)
		if err != nil {
			return recs, err
		}
		nameChoices(&rec, s.info.Params)
		if s.db != nil {
			b, err := json.Marshal(rec)
			if err != nil {
				return recs, fmt.Errorf("encode record: %w", err)
			}
			if err := s.db.SetRecord(context.WithoutCancel(ctx), s.id, it, b); err != nil {
				return recs, err
			}
		}
		s.mu.Lock()
		info.recorded = true
		s.mu.Unlock()
		recs = append(recs, rec)
	}
	return recs, nil
}

// addStopped adds trial t, of a batch of n, to Stopped: its last report
// when it was stopped early, else null (Stopped stays nil until a trial
// of the batch was stopped).
func (rec *Record) addStopped(t Trial, n int) {
	if t.Status == Pruned && len(t.Intermediates) > 0 {
		if rec.Stopped == nil {
			rec.Stopped = make([]*[2]float64, len(rec.Batch)-1, n)
		}
		p := t.Intermediates[len(t.Intermediates)-1]
		rec.Stopped = append(rec.Stopped, &[2]float64{float64(p.Step), p.Value})
	} else if rec.Stopped != nil {
		rec.Stopped = append(rec.Stopped, nil)
	}
}

// record builds iteration it's Record.
func (s *Study) record(ctx context.Context, obj sdk.Objective, it int, info *iterInfo, ts []Trial) (Record, error) {
	rec := Record{Iter: it, FitS: info.fitS, ProposeS: info.proposeS, Batch: [][]float64{}, Values: []*float64{}}
	var first, lastT time.Time
	for _, t := range ts {
		rec.Batch = append(rec.Batch, t.X)
		if t.Status == Complete {
			v := t.Value
			rec.Values = append(rec.Values, &v)
		} else {
			rec.Values = append(rec.Values, nil)
		}
		rec.addStopped(t, len(ts))
		if !t.StartedAt.IsZero() && (first.IsZero() || t.StartedAt.Before(first)) {
			first = t.StartedAt
		}
		if t.FinishedAt.After(lastT) {
			lastT = t.FinishedAt
		}
	}
	if !first.IsZero() && lastT.After(first) {
		rec.EvalS = lastT.Sub(first).Seconds()
	}
	if len(s.info.Outputs) > 0 {
		s.mu.Lock()
		complete, _, pruned := s.counts()
		rec.Evals = complete + pruned
		s.mu.Unlock()
		s.multiRecord(&rec, it, ts)
		return rec, nil
	}
	s.mu.Lock()
	complete, _, pruned := s.counts()
	rec.Evals = complete + pruned
	if b := s.bestObservedLocked(); b != nil {
		v := b.Value
		rec.BestObserved, rec.BestObservedX = &v, b.X
	}
	s.mu.Unlock()
	rc, err := s.recommendOnView(ctx)
	if err != nil {
		return rec, fmt.Errorf("recommend after iteration %d: %w", it, err)
	}
	if rc == nil {
		return rec, nil
	}
	rec.BestX = rc.X
	rec.BestValue = rc.Value
	// f(x̄) for the regret: noise-free when the objective can, else what
	// was observed there.
	f := rc.Value
	nf, ok := NoiseFreeOf(obj)
	if ok && !s.noiseFreeBroken && (s.info.Optimum != nil || rc.Value == nil) {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if s.opts.EvalTimeout > 0 {
			cctx, cancel = context.WithTimeout(ctx, s.opts.EvalTimeout)
		}
		v, err := nf.EvaluateNoiseFree(cctx, rc.X)
		cancel()
		switch {
		case err == nil && !math.IsNaN(v) && !math.IsInf(v, 0):
			f = &v
		case ctx.Err() != nil:
			return rec, nil
		default:
			s.noiseFreeBroken = true
			s.log.Warn().Err(err).Float64("value", v).Msg("noise-free evaluation failed; regret uses observed values from now on")
		}
	}
	if rc.Value == nil {
		if f != nil {
			rec.BestValue = f
		} else if !math.IsNaN(rc.Mean) {
			m := rc.Mean
			rec.BestValue = &m
		}
	}
	if s.info.Optimum != nil && f != nil {
		r := *s.info.Optimum - *f
		if s.info.Minimize {
			r = -r
		}
		r = math.Min(r, math.MaxFloat64) // f* − f overflows when both are near ±the largest float64
		rec.Regret = &r
	}
	return rec, nil
}

// bestObservedLocked returns the completed trial with the best value (the
// earliest among equals), or nil.
func (s *Study) bestObservedLocked() *Trial {
	var best *Trial
	for i := range s.trials {
		t := &s.trials[i]
		if t.Status != Complete {
			continue
		}
		if best == nil || (!s.info.Minimize && t.Value > best.Value) || (s.info.Minimize && t.Value < best.Value) {
			best = t
		}
	}
	if best == nil {
		return nil
	}
	b := *best
	b.X = append([]float64(nil), best.X...)
	return &b
}

// studyTimeLocked adds up, over the initial design and every BO iteration,
// the fit and proposal times and the span of the evaluations.
func (s *Study) studyTimeLocked() time.Duration {
	var secs float64
	for _, info := range s.iters {
		secs += info.fitS + info.proposeS
	}
	first, last := map[int]time.Time{}, map[int]time.Time{}
	for _, t := range s.trials {
		if t.StartedAt.IsZero() || t.FinishedAt.IsZero() {
			continue
		}
		if t.Iteration == ExternalIteration {
			// Enqueued points are evaluated one by one, whenever given.
			secs += t.EvalSeconds
			continue
		}
		if f, ok := first[t.Iteration]; !ok || t.StartedAt.Before(f) {
			first[t.Iteration] = t.StartedAt
		}
		if t.FinishedAt.After(last[t.Iteration]) {
			last[t.Iteration] = t.FinishedAt
		}
	}
	for it, f := range first {
		if d := last[it].Sub(f); d > 0 {
			secs += d.Seconds()
		}
	}
	return time.Duration(secs * float64(time.Second))
}
