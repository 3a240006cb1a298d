package host

import (
	"context"
	"fmt"
	"time"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// workerSummary summarizes a stored study — typically one workers shared,
// once they are done — as Run's Result does a single-process study: the
// evaluations, the best observed trial and the recommendation x̄ with its
// value and regret (the value noise-free when obj can evaluate without
// noise, as in the iteration records). It reads the stored trials without
// taking the study's lease and writes nothing, so it may run while other
// workers still hold the study. obj must be the study's objective,
// configured (as RunWorker leaves it). The Study it returns describes the
// study (Name, Info, Settings, Seed, Trials) and must not be run.
// Result.Elapsed is zero: the caller knows its own time.
func workerSummary(ctx context.Context, db store.Storage, name string, obj sdk.Objective) (*Study, *Result, error) {
	row, st, err := loadSettings(ctx, db, name)
	if err != nil {
		return nil, nil, err
	}
	opts := st.Options
	opts.Name, opts.Seed = name, row.Seed
	opts = opts.Normalized()
	space, err := NewSpace(st.Info.Params)
	if err != nil {
		return nil, nil, fmt.Errorf("study %q: %w", name, err)
	}
	_, nf := NoiseFreeOf(obj)
	s := &Study{name: name, info: st.Info, space: space, opts: opts, seed: row.Seed, id: row.ID,
		iters: map[int]*iterInfo{}, refine: refines(opts.Recommend, nf)}
	// The study's acquisition decides the model's data (a warp of the
	// outputs: acq.OutputWarper) and its fidelity: without it the summary
	// fitted unwarped values and, on Branin, recommended a point of regret
	// 19 where the study's records said 2e-6. An acquisition plugin this
	// process does not have leaves the model unwarped.
	if prop, mf, err := opts.studyProposer(st.Info, space); err == nil {
		s.proposer, s.mf = prop, mf
	}
	if err := s.loadTrials(ctx, db, row.ID); err != nil {
		return nil, nil, fmt.Errorf("study %q: %w", name, err)
	}
	its, err := db.Iterations(ctx, row.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("study %q: %w", name, err)
	}
	if _, err := s.restoreIterations(its); err != nil {
		return nil, nil, err
	}
	rec, err := s.summaryRecord(ctx, obj)
	if err != nil {
		return nil, nil, err
	}
	res := s.result(ctx, time.Now(), &rec)
	res.Elapsed = 0
	return s, res, nil
}

// summaryRecord is the shared study's latest stored record when it covers
// every finished trial — the proposer's own, as the web view shows it —
// and else a record made now.
func (s *Study) summaryRecord(ctx context.Context, obj sdk.Objective) (Record, error) {
	s.mu.Lock()
	complete, _, pruned := s.counts()
	last := s.lastRecord
	s.mu.Unlock()
	if last != nil && last.Evals == complete+pruned {
		return *last, nil
	}
	return s.record(ctx, obj, s.lastIter, &iterInfo{}, nil)
}
