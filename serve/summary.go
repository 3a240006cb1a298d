package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// Study states in a summary.
const (
	stateRunning     = "running"     // a live process holds the study's lease
	stateFinished    = "finished"    // the budget is spent, nothing in flight
	stateInterrupted = "interrupted" // trials in flight, nobody running them
	stateStopped     = "stopped"     // stopped before its budget
	stateNew         = "new"         // no trial yet
)

// summary is a study's line in the list and the head of its page.
type summary struct {
	Name        string `json:"name"`
	Objective   string `json:"objective"`
	Acquisition string `json:"acquisition"`
	State       string `json:"state"`
	// Holder is who runs the study ("host pid N") while State is running.
	Holder   string `json:"holder,omitempty"`
	Trials   int    `json:"trials"`
	Complete int    `json:"complete"`
	Failed   int    `json:"failed"`
	Pruned   int    `json:"pruned"` // stopped early (run --pruner)
	// Outside counts the trials the study did not propose (imported by a
	// warm start, attached or enqueued), which use up no budget.
	Outside int `json:"outside"`
	Running int `json:"running"`
	Pending int `json:"pending"`
	// Budget is the planned number of trials, Init + Iters·Batch.
	Budget   int      `json:"budget"`
	Minimize bool     `json:"minimize"`
	Optimum  *float64 `json:"optimum"`
	// BestObserved is the best completed value.
	BestObserved *float64 `json:"best_observed"`
	// Recommendation is f(x̄) and Regret f* − f(x̄) (for a minimizing
	// objective f(x̄) − f*) as of the latest finished iteration.
	Recommendation *float64 `json:"recommendation"`
	Regret         *float64 `json:"regret"`
	Iteration      int      `json:"iteration"` // latest finished BO iteration
	// Outputs are the objective's declared outputs when it has several
	// (sdk.Info.Outputs); Pareto, Hypervolume and FeasibleFraction are then
	// the latest record's (host.MultiRecord).
	Outputs          []outputJSON `json:"outputs,omitempty"`
	Pareto           []int        `json:"pareto,omitempty"`
	Hypervolume      *float64     `json:"hypervolume,omitempty"`
	FeasibleFraction *float64     `json:"feasible_fraction,omitempty"`
	Created          time.Time    `json:"created"`
	LastActivity     time.Time    `json:"last_activity"`

	id      int64
	workers int // live registered workers (worker mode)
	params  []sdk.Param
	opts    host.Options
	outputs []sdk.Output // the objective's declared outputs (none: one value)
}

// loadSummary reads the summary of study name.
func (s *Server) loadSummary(ctx context.Context, name string) (*summary, error) {
	if err := s.checkDB(); err != nil {
		return nil, err
	}
	row, err := s.db.Study(ctx, name)
	if err != nil {
		return nil, err
	}
	opts, info, err := host.StoredSettings(ctx, s.st, name)
	if err != nil {
		return nil, err
	}
	act, err := s.db.Activity(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	sm := &summary{Name: name, Objective: row.Objective, Acquisition: row.Acquisition,
		Trials: act.Trials, Complete: act.Complete, Failed: act.Failed, Pruned: act.Pruned, Running: act.Running, Pending: act.Pending,
		Budget: opts.Init + opts.Iters*opts.Batch, Minimize: info.Minimize, Optimum: info.Optimum,
		Created: row.CreatedAt, LastActivity: act.LastChange, id: row.ID, params: info.Params, opts: opts,
		Outputs: outputsOf(info), outputs: info.Outputs, Outside: act.Outside}
	sm.BestObserved = act.MaxValue
	if info.Minimize {
		sm.BestObserved = act.MinValue
	}
	raw, err := s.db.LatestRecord(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	if raw != nil {
		var rec host.Record
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("study %q: bad stored record: %w", name, err)
		}
		sm.Recommendation, sm.Regret, sm.Iteration = rec.BestValue, rec.Regret, rec.Iter
		if m := rec.MultiRecord; m != nil {
			sm.Hypervolume, sm.FeasibleFraction = m.Hypervolume, m.FeasibleFraction
			if m.Pareto != nil {
				sm.Pareto = m.Pareto.Trials
			}
		}
	}
	if objs := info.Objectives(); len(objs) > 0 {
		// A trial's value is its first objective output's: the progress
		// chart follows that output, in its direction.
		sm.BestObserved = nil
		sm.Minimize = info.Outputs[objs[0]].Goal == sdk.Minimize
	}
	ws, err := s.db.Workers(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	sm.workers = len(ws)
	if err := sm.setState(s.db.CheckLease(ctx, row.ID)); err != nil {
		return nil, err
	}
	// The other values come from JSON (stored settings and records) and
	// are finite; the best value is the database's own aggregate.
	if b := sm.BestObserved; b != nil && (math.IsInf(*b, 0) || math.IsNaN(*b)) {
		return nil, fmt.Errorf("study %q: %w: best value %v", name, errUnencodable, *b)
	}
	return sm, nil
}

// Own counts the study's own finished trials: complete, stopped early or
// failed, without those imported or attached (which use up no budget).
func (sm *summary) Own() int { return sm.Complete + sm.Pruned + sm.Failed - sm.Outside }

// EvalText is the study list's evaluations cell: the own finished trials
// against the budget, naming the stopped, failed and outside ones (the
// list's script, evaluations in list.js, writes the same).
func (sm *summary) EvalText() string {
	var notes []string
	if sm.Pruned > 0 {
		notes = append(notes, fmt.Sprintf("%d stopped", sm.Pruned))
	}
	if sm.Failed > 0 {
		notes = append(notes, fmt.Sprintf("%d failed", sm.Failed))
	}
	if sm.Outside > 0 {
		notes = append(notes, fmt.Sprintf("%d imported or attached", sm.Outside))
	}
	t := fmt.Sprintf("%d / %d", sm.Own(), sm.Budget)
	if len(notes) > 0 {
		t += " (" + strings.Join(notes, ", ") + ")"
	}
	return t
}

// setState derives the study's state from its counts and the answer of
// CheckLease.
func (sm *summary) setState(leaseErr error) error {
	var held *store.LeaseHeldError
	switch inFlight := sm.Running + sm.Pending; {
	case errors.As(leaseErr, &held):
		sm.State, sm.Holder = stateRunning, fmt.Sprintf("%s pid %d", held.Host, held.PID)
	case leaseErr != nil:
		return leaseErr
	case sm.Trials == 0:
		sm.State = stateNew
	case inFlight > 0 && sm.workers > 0:
		// Workers are evaluating while no proposer holds the lease (one
		// gave it up, after a database restart, until another takes it).
		sm.State, sm.Holder = stateRunning, fmt.Sprintf("%d workers", sm.workers)
	case inFlight > 0:
		sm.State = stateInterrupted
	case sm.Own() >= sm.Budget:
		// A pruned trial uses up budget; one told or imported from
		// outside the study's proposals (a warm start's) does not.
		sm.State = stateFinished
	default:
		sm.State = stateStopped
	}
	return nil
}

// errUnencodable marks a study whose stored values JSON cannot carry
// (±Inf or NaN, only a hand edit writes them).
var errUnencodable = errors.New("stored values JSON cannot carry (is the database hand-edited?)")

// loadSummaries reads the summaries of every study, oldest first.
func (s *Server) loadSummaries(ctx context.Context) ([]*summary, error) {
	if err := s.checkDB(); err != nil {
		return nil, err
	}
	names, err := s.db.StudyNames(ctx)
	if err != nil {
		return nil, fmt.Errorf("list studies in %s: %w", s.db.Path(), err)
	}
	out := make([]*summary, 0, len(names))
	for _, n := range names {
		sm, err := s.loadSummary(ctx, n)
		if errors.Is(err, errUnencodable) {
			// One study's bad data (a hand-edited ±Inf) must not hide
			// the others: the list leaves it out, its own page says why.
			s.log.Warn().Err(err).Str("study", n).Msg("study left out of the list")
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, sm)
	}
	return out, nil
}

// outputJSON is a declared output as the page reads it: goal "maximize",
// "minimize" or "constraint", and a constraint's feasible side
// ("at_most": output ≤ bound, or "at_least") and bound.
type outputJSON struct {
	Name     string   `json:"name"`
	Goal     string   `json:"goal"`
	Feasible string   `json:"feasible,omitempty"`
	Bound    *float64 `json:"bound,omitempty"`
}

func outputsOf(info sdk.Info) []outputJSON {
	var out []outputJSON
	for _, o := range info.Outputs {
		oj := outputJSON{Name: o.Name, Goal: o.Goal.String(), Bound: o.Bound}
		switch o.Feasible {
		case sdk.AtMost:
			oj.Feasible = "at_most"
		case sdk.AtLeast:
			oj.Feasible = "at_least"
		}
		out = append(out, oj)
	}
	return out
}
