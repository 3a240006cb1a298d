package host

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
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
		return s.recommendFidelity(ctx)
	}
	d := s.space.Dim()
	ds := s.dataset()
	if ds.n() == 0 || !s.anyComplete() {
		return nil, nil
	}
	t := s.lastIter + 1
	ds, reg := s.modelData(ds)
	fr, err := s.fitCached(ctx, ds, t)
	if ctx.Err() != nil {
		return nil, err
	}
	if err != nil {
		s.log.Warn().Err(err).Msg("recommending the best observation: the GP could not be fitted")
		return s.evaluatedRec(ds.ids[s.bestComplete(ds.ids, ds.y)], math.NaN()), nil
	}
	g := fr.gp // fitted on ds.X: its observed inputs are the dataset's rows (region coordinates for a local model)
	_, mean := acq.BestMean(g)
	best := s.bestComplete(ds.ids, mean)
	rec := s.evaluatedRec(ds.ids[best], ds.native(mean[best]))
	offSlice := !s.onSlice(s.trials[ds.ids[best]])
	if !s.refine && !offSlice {
		return rec, nil
	}
	// The best evaluated point is one of the local searches' starts (next
	// to the best raw samples), so the refined x̄ is never worse than the
	// evaluated one for want of a start in its basin.
	// Maximize copies its starts, so the row can be shared.
	start := mat.NewDense(1, d, ds.X.RawRowView(best))
	return s.refineMean(ctx, g, modelCoords{reg: reg}, start, s.pins.inRegion(reg), sliceBest(mean[best], offSlice), ds, rec)
}

// sliceBest is the mean a refined x̄ must beat: the best complete trial's,
// or, when no complete trial lies on the pinned slice (offSlice), none —
// x̄ is then the posterior mean's maximizer on the slice, unevaluated
// (even in RecommendEvaluated), rather than a trial off it.
func sliceBest(mean float64, offSlice bool) float64 {
	if offSlice {
		return math.Inf(-1)
	}
	return mean
}

// modelCoords maps points between the unit cube and the inputs of the GP
// a recommendation searches: a local model's region (reg, nil for the
// unit cube), or a GP over (u, t) read at full training, t = 1 (fidelity).
type modelCoords struct {
	reg      *gp.Region
	fidelity bool
}

// toModel returns u (unit cube) as an input of the GP.
func (c modelCoords) toModel(u []float64) []float64 {
	switch {
	case c.fidelity:
		return atFullTraining(mat.NewDense(1, len(u), u)).RawRowView(0)
	case c.reg != nil:
		x := make([]float64, len(u))
		c.reg.ToUnit(x, u)
		return x
	}
	return u
}

// toUnit returns the unit-cube coordinates of the GP's input x, which it
// may overwrite.
func (c modelCoords) toUnit(x []float64) []float64 {
	switch {
	case c.fidelity:
		return x[:len(x)-1]
	case c.reg != nil:
		c.reg.FromUnit(x, x)
	}
	return x
}

// refineMean is the paper's x̄ (§5) for RecommendRefine: the maximizer of
// g's posterior mean, searched from start (a row of g's inputs: the best
// evaluated point; MaximizeMean adds its best raw samples) with the
// coordinates pinned (g's coordinates, NaN where free). It returns rec,
// the evaluated recommendation whose mean is bestMean (standardized), when
// no search beats it, an evaluated trial when x̄ snaps onto one, and
// otherwise the unevaluated x̄.
func (s *Study) refineMean(ctx context.Context, g *gp.GP, c modelCoords, start *mat.Dense, pinned []float64, bestMean float64, ds *dataset, rec *Recommendation) (*Recommendation, error) {
	X, _, err := acq.MaximizeMean(ctx, g, start, acq.OptimizeSettings{Pinned: pinned, Canonical: s.space.canonicalFunc()}, streamRand(s.seed, s.lastIter+1, streamRecommend))
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		s.log.Warn().Err(err).Msg("posterior-mean refinement failed; recommending the best evaluated point")
		return rec, nil
	}
	u := s.space.Snap(c.toUnit(X.RawRowView(0))) // X is this call's own
	m, _ := g.MeanVar(c.toModel(u))
	if !(m > bestMean) {
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
