package tes

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// ProposeFidelity implements acq.FidelityProposer: multi-fidelity TES
// (MF-TES; derivation in the package doc, "Multi-fidelity"). st.GP is over
// (x, t), t the last coordinate. The trusted maximizers are the maximizers
// of sample paths over x at t = 1; each query (x, t) maximizes TES_ep's α
// of the observation y(x, t) about which of them wins at full fidelity,
// divided by cost.At(t). As Deliver does, every ExploitEvery-th
// single-point iteration (one slot of a batch) evaluates x̄ = argmax_x μ(x,
// 1) at full fidelity when it is worth it; when it is not, that
// iteration's query (that slot's point) is chosen at full fidelity. A
// batch is greedy: each further
// point maximizes α/cost given the earlier ones (and x̄, and the trials in
// flight) as pending, α(P ∪ {b}) − α(P). As Deliver's, the queries are
// searched in the trust region around the evaluated point whose mean at
// full fidelity is largest, over x only (every fidelity stays open); its
// opening design is not used: the host's initial design opens the study at
// full fidelity.
func (p *Deliver) ProposeFidelity(ctx context.Context, st *acq.State, q int, cost acq.FidelityCost) (*mat.Dense, error) {
	if st == nil || st.GP == nil || st.Rand == nil {
		return nil, fmt.Errorf("tes: state needs a GP and a random stream")
	}
	if q < 1 || cost.Steps < 1 || !(cost.Fixed >= 0) {
		return nil, fmt.Errorf("tes: batch size %d, %d fidelities and fixed cost %v: want positive, positive and ≥ 0", q, cost.Steps, cost.Fixed)
	}
	s := p.Settings.withDefaults()
	xbar, centre, worth, err := p.fullRecommendation(ctx, fullFidelity(st), s)
	if err != nil {
		return nil, err
	}
	exploit := worth && (q > 1 || s.exploitIteration(st))
	if exploit && q == 1 {
		return xbar, nil
	}
	pending, rest := st.Pending, q
	if exploit {
		pending, rest = stackRows(st.Pending, xbar), q-1
	}
	// x̄'s slot when x̄ is not worth an evaluation (the mean at full
	// fidelity peaks at an evaluated point): the first query is chosen
	// at full fidelity, so that the share of the evaluations x̄ would take
	// still goes to t = 1 and can show the model wrong there. Cheap
	// queries alone, each rated α/c(t), left augmented Branin's runs
	// refining at step 1 for 40 iterations (docs/results/multifidelity).
	refine := !worth && (q > 1 || s.exploitIteration(st))
	picked, err := p.fidelityQuery(ctx, st, s, centre, rest, pending, xbar, cost, refine)
	if err != nil {
		return nil, err
	}
	if exploit {
		return stackRows(xbar, picked), nil
	}
	return picked, nil
}

// fidelityQuery returns MF-TES's rest points, greedy, given the pending
// points, searched in the trust region (over x) around the point centre
// (1×(d+1)) unless it is the whole cube; xbar is a candidate start of the
// search for X*. With refine the first point is chosen at full fidelity
// (t = 1, maximizing α there).
func (p *Deliver) fidelityQuery(ctx context.Context, st *acq.State, s deliverSettings, centre *mat.Dense, rest int, pending, xbar *mat.Dense, cost acq.FidelityCost, refine bool) (*mat.Dense, error) {
	reg, ok := queryBox(st, s.TrustRegion, centre, st.Dim()-1)
	rst := st
	if ok {
		var err error
		if rst, err = inRegion(st, reg); err != nil {
			return nil, fmt.Errorf("tes: trust region: %w", err)
		}
		// As in Deliver.query: the carried X* stays in unit-cube
		// coordinates between iterations.
		p.TES.Scorer.mapPrevious(func(P *mat.Dense) *mat.Dense { return reg.RowsToUnit(P, true) })
		defer p.TES.Scorer.mapPrevious(func(P *mat.Dense) *mat.Dense { return reg.RowsFromUnit(P) })
		pending, xbar = reg.RowsToUnit(pending, false), reg.RowsToUnit(xbar, true)
	}
	m, err := p.TES.Scorer.model(ctx, fullFidelity(rst), rest, xbar)
	if err != nil {
		return nil, err
	}
	var picked *mat.Dense
	for i := range rest {
		f, err := m.Func(1, stackRows(pending, picked), rst.Rand)
		if err != nil {
			return nil, err
		}
		// The gain is divided by the cost: it must not carry α(pending)'s
		// own Monte-Carlo error (shareBasePoints).
		if err := f.shareBasePoints(); err != nil {
			return nil, err
		}
		mst := rst
		if refine && i == 0 {
			mst = fullFidelity(rst)
		}
		x, err := p.maximizePerCost(ctx, mst, f, cost)
		if err != nil {
			return nil, err
		}
		picked = stackRows(picked, x)
	}
	if ok {
		picked = reg.RowsFromUnit(picked)
	}
	return picked, nil
}

// fullFidelity returns st with the fidelity coordinate pinned at 1: the
// state in which X* and x̄ are searched.
func fullFidelity(st *acq.State) *acq.State {
	d := st.GP.Dim()
	pin := make([]float64, d)
	for j := range pin {
		pin[j] = math.NaN()
		if j < len(st.Pinned) {
			pin[j] = st.Pinned[j]
		}
	}
	pin[d-1] = 1
	full := *st
	full.Pinned = pin
	return &full
}

// fullRecommendation returns x̄ = argmax_x μ(x, 1) (1×(d+1), last
// coordinate 1; over the pinned slice with pins), the evaluated point
// whose x has the largest μ(x, 1), moved onto that slice at t = 1
// (acq.BestMeanOnSlice: the trust region's centre), and whether x̄ is worth an
// evaluation: μ(x̄, 1) above μ at that point, and x̄ farther than
// MinDistance length-scales from every pending point and — except in a
// warm-started study before its first evaluation (warmFirst), as in
// Deliver's recommendation — from every full-fidelity observation.
func (p *Deliver) fullRecommendation(ctx context.Context, full *acq.State, s deliverSettings) (*mat.Dense, *mat.Dense, bool, error) {
	g := full.GP
	X := g.X()
	_, d := X.Dims()
	centre, mbest := acq.BestMeanOnSlice(g, full.Pinned)
	starts := stackRows(centre, p.TES.Scorer.previous(d)) // MaximizeMean copies its starts
	xbar, mbar, err := acq.MaximizeMean(ctx, g, starts, full.Pin(acq.OptimizeSettings{}), full.Rand)
	if err != nil {
		return nil, centre, false, fmt.Errorf("tes: maximize the posterior mean at full fidelity: %w", err)
	}
	if !(mbar > mbest) || math.IsNaN(mbar) {
		return xbar, centre, false, nil
	}
	ell := lengthscales(g.Kernel())
	x := xbar.RawRowView(0)
	near := func(P *mat.Dense) bool { return nearScaled(x, P, ell, s.MinDistance) }
	return xbar, centre, (warmFirst(full) || !near(X)) && !near(full.Pending), nil
}

// maximizePerCost returns the point (x, t), t snapped to a step, that
// maximizes α(x, t)/cost(t) for the single-point α f. With one distinct
// trusted maximizer α ≡ 0, and the point is x* at full fidelity (as
// proposer.maximize does).
func (p *Deliver) maximizePerCost(ctx context.Context, st *acq.State, f *Func, cost acq.FidelityCost) (*mat.Dense, error) {
	if k, _ := f.m.XStar.Dims(); k == 1 {
		return mat.DenseCopyOf(f.m.XStar), nil
	}
	cf := &perCost{f: f, cost: cost}
	def := optimizeDefaults(p.TES.Optimize, 1)
	if p.TES.Optimize.MaxIter <= 0 {
		def.MaxIter = largeMaxIter(def.MaxIter, st.GP.N())
	}
	x, _, err := acq.MaximizeMixed(ctx, acq.FeasibilityWeighted(cf, st), 1, st.GP.Dim(), acq.CategoriesOf(st.GP), st.Pin(def), st.Rand)
	if err != nil {
		return nil, fmt.Errorf("tes: optimize α per unit cost: %w", err)
	}
	_, d := x.Dims()
	x.Set(0, d-1, cost.Snap(x.At(0, d-1)))
	return x, nil
}

// perCost is α(x, t)/cost(t) for one point, t the last coordinate, with
// its gradient: ∂/∂x = (∂α/∂x)/c, ∂/∂t = (∂α/∂t)/c − α/c² (∂c/∂t = 1).
type perCost struct {
	f    *Func
	cost acq.FidelityCost
}

// fidelityStarts are the fidelities at which each of TES's starts (at t =
// 1, from X*) is also tried.
var fidelityStarts = []float64{1, 0.5, 0.25, 0.1}

func (c *perCost) Eval(X, grad *mat.Dense) float64 {
	_, d := X.Dims()
	t := X.At(0, d-1)
	cv := c.cost.At(t)
	a := c.f.Eval(X, grad)
	if grad != nil {
		grad.Scale(1/cv, grad)
		grad.Set(0, d-1, grad.At(0, d-1)-a/(cv*cv))
	}
	return a / cv
}

func (c *perCost) HasGradient() bool { return true }

// Starts implements acq.Starter: TES's starts, each also at the
// fidelities of fidelityStarts (snapped to steps).
func (c *perCost) Starts(q int) []*mat.Dense {
	var out []*mat.Dense
	for _, s := range c.f.Starts(q) {
		_, d := s.Dims()
		for _, t := range fidelityStarts {
			b := mat.DenseCopyOf(s)
			for i := range q {
				b.Set(i, d-1, c.cost.Snap(t))
			}
			out = append(out, b)
		}
	}
	return out
}
