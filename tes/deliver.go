package tes

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// deliverSettings configure Deliver. The zero value gives the defaults.
type deliverSettings struct {
	// ExploitEvery is, for batches of one point, how often an iteration
	// evaluates x̄ instead of TES's query: every ExploitEvery-th iteration
	// (by the study's iteration number; in a warm-started study counted
	// from its first, see exploitIteration) when x̄ is worth evaluating.
	// Zero means 4, so that about a quarter of the evaluations go to x̄ as
	// with one slot of a batch of four; a negative value never spends a
	// single-point iteration on x̄.
	ExploitEvery int
	// MinDistance is how far, in length-scale units, x̄ must be from every
	// evaluated and pending point to be worth an evaluation (closer, its
	// value is as good as known). Zero means 1e-3, the distance under which
	// TES counts two maximizers as one.
	MinDistance float64
	// TrustRegion is the side of the box around the best trial in which
	// TES's queries are searched, in units of the length-scales divided
	// by their geometric mean (region.go). Zero means 0.2, the side that
	// gave the lowest regret on Hartmann-6 of those tried, below the whole
	// cube's (docs/results/README.md, "Measurements behind the code"). A negative value searches the whole
	// cube, as the paper's TES does.
	TrustRegion float64
	// DesignPoints is how many points (evaluated and pending) the study
	// must have before TES and x̄ take over; below that Deliver proposes
	// space-filling points (design.go). Zero means d + 1, at most 4
	// (maxDesignPoints); a negative value never proposes them.
	DesignPoints int
	// DesignMargin keeps the space-filling points of a continuous
	// coordinate that far from its bounds: they are drawn from
	// [m, 1 − m] (design.go). Zero means 0.2; a negative value draws
	// them from the whole cube.
	DesignMargin float64
	// NoWarp fits the GP to the standardized observations as they are. By
	// default the host warps them first (acq.OutputWarper): when the
	// values have a long lower tail — a few very bad observations, as of
	// a minimized objective spanning decades — a power transform
	// compresses it, so that those values do not set the GP's length-scales.
	NoWarp bool
	// NoSureExplore keeps TES's query when the posterior is sure of x*
	// (one distinct trusted maximizer, α ≡ 0). By default such a
	// single-point query goes to the point of largest posterior variance
	// instead (sure.go).
	NoSureExplore bool
}

func (s deliverSettings) withDefaults() deliverSettings {
	if s.ExploitEvery == 0 {
		s.ExploitEvery = 4
	}
	if s.MinDistance <= 0 {
		s.MinDistance = 1e-3
	}
	if s.TrustRegion == 0 {
		s.TrustRegion = 0.2
	}
	if s.DesignMargin == 0 {
		s.DesignMargin = 0.2
	}
	return s
}

// Deliver is the default acquisition "tes": TES_ep made to deliver what it
// knows as evaluated results.
//
// TES (like PES) queries where it learns most about the maximizer x*,
// which is near the trusted maximizers but rarely at the posterior-mean
// maximizer x̄ = argmax μ (the paper's recommendation, §5). A user keeps
// the best *evaluated* trial, so a model that has located x* to 1e-4 can
// still leave the user a trial with regret 1e-1. Deliver spends some
// evaluations at x̄ itself:
//
//   - with a batch of q > 1 points, one slot is x̄ and the other q − 1 points
//     maximize TES's α given x̄ (and the trials in flight) as pending —
//     the batch α(B ∪ {x̄}) − α({x̄}) of Eq. (3), so TES's points complement
//     the evaluation at x̄;
//   - with q = 1, every ExploitEvery-th iteration evaluates x̄ and the
//     others are TES_ep's queries. The rule ignores the study's budget on
//     purpose: a study extended with more iterations must propose what one
//     run with the larger budget would.
//
// TES's points are searched in a trust region (Settings.TrustRegion,
// region.go): a box around the evaluated point with the largest posterior
// mean, sides proportional to the length-scales, in which paths, X* and α
// are those of the same posterior. Inside it TES learns about the box's
// maximizer and climbs; x̄, searched over the whole cube, still moves the
// study to another mode once the model rates it higher.
//
// x̄ is spent only when worth it: when its posterior mean exceeds that of
// every evaluated point and it lies farther than MinDistance length-scales
// from every evaluated or pending point; otherwise the whole batch is TES's.
// x̄ is also a candidate start of the search for the trusted maximizers, so
// sample paths whose maximum lies in x̄'s basin find it. And the GP is fitted
// to warped observations (WarpOutputs): a long tail of bad values, which
// would otherwise shorten the length-scales and flatten the mean near the
// maximum, is compressed by a power transform when the data call for one.
//
// When the posterior is sure of x* — every trusted maximizer is one point,
// so TES's α is zero everywhere — a single-point query of TES goes to the
// point of largest posterior variance instead (sure.go; not with points in
// flight, nor with Settings.NoSureExplore). TES then has nothing to learn,
// and its query, a path's maximizer a hair from x̄, would only compete
// with x̄'s evaluation for the best observed value through the noise; the
// least-known point is the one evaluation that could show the model
// wrong. On BBOB f5 (a plane, optimum at a corner) this took the user's
// regret from 1e-3 to 0 (docs/results/broad/thirteenth-round.md).
//
// A study warm-started from finished studies (acq.State.Imported > 0) has
// a model of their data at its first iteration, and nothing of its own:
// the user who warm-starts wants the old best confirmed, or improved, by
// this study before it explores. So x̄ is evaluated first — at the study's
// first iteration it is worth an evaluation next to an evaluated point too
// (all of which were imported), and the single-point schedule counts from
// that iteration (x̄ at iterations 1, 1 + ExploitEvery, …, instead of
// ExploitEvery, 2·ExploitEvery, …). On Branin and Hartmann-6 this first
// evaluation reached the old study's best to 1e-3 on 10 of 10 seeds each,
// against 0 and 1 of 10 when TES's queries came first
// (docs/results/tuning/README.md, "Warm start from a finished study").
//
// Until the study has min(d + 1, 4) points (Settings.DesignPoints) the batch
// opens with space-filling points instead (design.go): the trust region
// placed around the better of 2 random points would otherwise climb
// whichever basin that point lies in. The rest of such a batch, q − k
// points, is proposed as a batch of q − k with the design points pending
// (so a single remaining point follows the q = 1 rule for x̄).
//
// The rules need no state beyond TES's own (the iteration number, the
// evaluation and import counts and the pending points are part of
// acq.State), so resumed studies stay bitwise identical.
type Deliver struct {
	TES      *proposer
	Settings deliverSettings
}

// newDeliver returns the default acquisition for acq.Options o.
func newDeliver(o acq.Options) (*Deliver, error) {
	p, err := newProposer(EP, o)
	if err != nil {
		return nil, err
	}
	return &Deliver{TES: p.(*proposer)}, nil
}

// Propose implements acq.Proposer.
func (p *Deliver) Propose(ctx context.Context, st *acq.State, q int) (*mat.Dense, error) {
	if st == nil || st.GP == nil || st.Rand == nil {
		return nil, fmt.Errorf("tes: state needs a GP and a random stream")
	}
	if q < 1 {
		return nil, fmt.Errorf("tes: batch size %d must be positive", q)
	}
	s := p.Settings.withDefaults()
	if F := s.design(st, q); F != nil {
		st.Log.Debug().Int("points", rowsOf(F)).Msg("tes: space-filling points until the study has its opening design")
		return p.afterDesign(ctx, st, q, F)
	}
	xbar, centre, worth, err := p.recommendation(ctx, st, s)
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
	X, err := p.query(ctx, st, s, centre, rest, q, pending, xbar)
	if err != nil || !exploit {
		return X, err
	}
	return stackRows(xbar, X), nil
}

// afterDesign completes a batch of q that opens with the space-filling
// points F: the other points are proposed as usual with F pending.
func (p *Deliver) afterDesign(ctx context.Context, st *acq.State, q int, F *mat.Dense) (*mat.Dense, error) {
	k, _ := F.Dims()
	if k == q {
		return F, nil
	}
	rest := *st
	rest.Pending = stackRows(st.Pending, F)
	X, err := p.Propose(ctx, &rest, q-k)
	if err != nil {
		return nil, err
	}
	return stackRows(F, X), nil
}

// query returns TES's rest points of a batch of q, given the pending
// points, searched in the trust region (region.go) around the point
// centre (1×d) unless it is the whole cube; xbar (may be nil) is a
// candidate start of the search for X*.
func (p *Deliver) query(ctx context.Context, st *acq.State, s deliverSettings, centre *mat.Dense, rest, q int, pending, xbar *mat.Dense) (*mat.Dense, error) {
	reg, ok := queryBox(st, s.TrustRegion, centre, st.Dim())
	qst, qpending, qxbar := st, pending, xbar // in the region's coordinates
	if ok {
		rst, err := inRegion(st, reg)
		if err != nil {
			return nil, fmt.Errorf("tes: trust region: %w", err)
		}
		// The carried X* (next iteration's starts) stays in unit-cube
		// coordinates between iterations: only the points inside the
		// region are starts here, and this iteration's X* is mapped back.
		p.TES.Scorer.mapPrevious(func(P *mat.Dense) *mat.Dense { return reg.RowsToUnit(P, true) })
		defer p.TES.Scorer.mapPrevious(func(P *mat.Dense) *mat.Dense { return reg.RowsFromUnit(P) })
		qst, qpending, qxbar = rst, reg.RowsToUnit(pending, false), reg.RowsToUnit(xbar, true)
	}
	f, err := p.TES.Scorer.prepareWith(ctx, qst, rest, q, qpending, qxbar)
	if err != nil {
		return nil, err
	}
	if s.sure(f, st, rest) {
		return maxVariance(ctx, st)
	}
	X, err := p.TES.maximize(ctx, f, qst, rest)
	if err != nil || !ok {
		return X, err
	}
	return reg.RowsFromUnit(X), nil
}

// exploitIteration reports whether a single-point iteration is one of x̄'s:
// every ExploitEvery-th iteration, counted in a warm-started study from
// its first (iterations 1, 1 + k, 1 + 2k, … for k = ExploitEvery), whose
// model already holds a finished study, and otherwise from the k-th, so
// that TES's first k − 1 queries follow the opening design.
func (s deliverSettings) exploitIteration(st *acq.State) bool {
	switch {
	case s.ExploitEvery <= 0:
		return false
	case st.Imported > 0:
		return (st.Iter-1)%s.ExploitEvery == 0
	}
	return st.Iter%s.ExploitEvery == 0
}

// warmFirst reports whether the study was warm-started and has no
// evaluation of its own yet: every observation of its model was imported.
func warmFirst(st *acq.State) bool {
	return st.Imported > 0 && st.Evaluated == st.Imported
}

// recommendation returns x̄ = argmax μ over the unit cube (1×d; over the
// pinned slice with pins), the evaluated point with the largest posterior
// mean moved onto that slice (1×d, acq.BestMeanOnSlice: the trust region's centre)
// and whether x̄ is worth an evaluation: μ(x̄) above μ at that point, and
// x̄ farther than MinDistance length-scales from every pending point and —
// except in a warm-started study before its first evaluation (warmFirst),
// whose evaluated points were all measured by another study — from every
// evaluated one. The search starts from that point and from the previous
// iteration's trusted maximizers.
func (p *Deliver) recommendation(ctx context.Context, st *acq.State, s deliverSettings) (*mat.Dense, *mat.Dense, bool, error) {
	g := st.GP
	X := g.X()
	_, d := X.Dims()
	centre, mbest := acq.BestMeanOnSlice(g, st.Pinned)
	starts := stackRows(centre, p.TES.Scorer.previous(d)) // MaximizeMean copies its starts
	xbar, mbar, err := acq.MaximizeMean(ctx, g, starts, st.Pin(acq.OptimizeSettings{}), st.Rand)
	if err != nil {
		return nil, centre, false, fmt.Errorf("tes: maximize the posterior mean: %w", err)
	}
	if !(mbar > mbest) {
		return xbar, centre, false, nil
	}
	ell := lengthscales(g.Kernel())
	x := xbar.RawRowView(0)
	near := func(P *mat.Dense) bool { return nearScaled(x, P, ell, s.MinDistance) }
	return xbar, centre, (warmFirst(st) || !near(X)) && !near(st.Pending) && !math.IsNaN(mbar), nil
}

// WarpOutputs implements acq.OutputWarper: the host fits the GP to warped
// observations unless Settings.NoWarp.
func (p *Deliver) WarpOutputs() bool { return !p.Settings.NoWarp }

// CarriedState implements acq.Carrier: Deliver carries only TES's state.
func (p *Deliver) CarriedState() ([]byte, error) { return p.TES.CarriedState() }

// RestoreState implements acq.Carrier.
func (p *Deliver) RestoreState(state []byte) error { return p.TES.RestoreState(state) }

// stackRows returns the rows of a followed by those of b (either may be
// nil).
func stackRows(a, b *mat.Dense) *mat.Dense {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	var out mat.Dense
	out.Stack(a, b)
	return &out
}
