package host

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// Recommendation is the study's current answer x̄: the maximizer of the GP
// posterior mean (paper §5), over the evaluated points (RecommendEvaluated)
// or over the whole space (RecommendRefine; also RecommendAuto when the
// objective has a noise-free evaluation).
type Recommendation struct {
	X       []float64 // x̄ in native units
	U       []float64 // x̄ in the unit cube
	TrialID int       // the trial evaluated at x̄, or -1
	// Value is the observed value at x̄ (native units) when x̄ was
	// evaluated, else nil.
	Value *float64
	// Mean is the posterior mean at x̄ in native units (NaN when the GP
	// could not be fitted and x̄ is simply the best observation).
	Mean float64
}

// Recommend returns the current recommendation x̄, or an error wrapping
// ErrNoEvaluations before any evaluation has completed. It fits the GP on the completed evaluations
// exactly as the next Ask would (and Ask then reuses that fit); if fitting
// fails x̄ is the best observed point.
func (s *Study) Recommend(ctx context.Context) (*Recommendation, error) {
	if m := len(s.info.Outputs); m > 0 {
		return nil, fmt.Errorf("study %q: recommend: objective %s has %d outputs, whose best trials are the Pareto set of Record.MultiRecord (Result.Multi)", s.name, s.info.Name, m)
	}
	rec, err := s.recommendOnView(ctx)
	if err == nil && rec == nil {
		return nil, fmt.Errorf("study %q: recommend: %w", s.name, ErrNoEvaluations)
	}
	return rec, err
}

// recommendOnView recommends on a view of the study (fit and search with
// no lock held) and keeps the view's fit for the next Ask.
func (s *Study) recommendOnView(ctx context.Context) (*Recommendation, error) {
	s.mu.Lock()
	v := s.viewLocked()
	s.mu.Unlock()
	rec, err := v.recommend(ctx)
	s.mu.Lock()
	s.adoptFitLocked(v)
	s.mu.Unlock()
	return rec, err
}

// recommend is Recommend with nil, nil before any evaluation has
// completed, on a view (viewLocked).
func (s *Study) recommend(ctx context.Context) (*Recommendation, error) {
	if s.mf != nil {
		return s.recommendFidelity(), nil
	}
	d := s.space.Dim()
	ds := s.dataset()
	if ds.n() == 0 || !s.anyComplete() {
		return nil, nil
	}
	t := s.lastIter + 1
	ds, reg := s.modelData(ds)
	fr, err := s.fitCached(ds, t)
	if err != nil {
		s.log.Warn().Err(err).Msg("recommending the best observation: the GP could not be fitted")
		return s.evaluatedRec(ds.ids[s.bestComplete(ds.ids, ds.y)], math.NaN()), nil
	}
	g := fr.gp // fitted on ds.X: its observed inputs are the dataset's rows (region coordinates for a local model)
	_, mean := acq.BestMean(g)
	best := s.bestComplete(ds.ids, mean)
	rec := s.evaluatedRec(ds.ids[best], ds.native(mean[best]))
	if !s.refine {
		return rec, nil
	}
	// The best evaluated point is one of the local searches' starts (next
	// to the best raw samples), so the refined x̄ is never worse than the
	// evaluated one for want of a start in its basin.
	// Maximize copies its starts, so the row can be shared.
	start := mat.NewDense(1, d, ds.X.RawRowView(best))
	X, _, err := acq.MaximizeMean(ctx, g, start, acq.OptimizeSettings{Pinned: s.pins.inRegion(reg), Canonical: s.space.canonicalFunc()}, streamRand(s.seed, t, streamRecommend))
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		s.log.Warn().Err(err).Msg("posterior-mean refinement failed; recommending the best evaluated point")
		return rec, nil
	}
	x := X.RawRowView(0)
	if reg != nil {
		reg.FromUnit(x, x) // X is this call's own
	}
	u := s.space.Snap(x)
	gu := u // u in g's coordinates
	if reg != nil {
		gu = make([]float64, d)
		reg.ToUnit(gu, u)
	}
	m, _ := g.MeanVar(gu)
	if !(m > mean[best]) {
		return rec, nil
	}
	for _, tr := range s.trials {
		if tr.Status == Complete && collides(u, [][]float64{tr.U}) {
			return s.evaluatedRec(tr.ID, ds.native(m)), nil
		}
	}
	return &Recommendation{X: s.space.ToNative(u), U: u, TrialID: -1, Mean: ds.native(m)}, nil
}

func (s *Study) evaluatedRec(id int, mean float64) *Recommendation {
	t := s.trials[id]
	v := t.Value
	return &Recommendation{X: append([]float64(nil), t.X...), U: append([]float64(nil), t.U...), TrialID: id, Value: &v, Mean: mean}
}
