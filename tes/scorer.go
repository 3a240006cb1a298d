package tes

import (
	"context"
	"fmt"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

func init() {
	acq.Register("tes-ep", func(o acq.Options) (acq.Proposer, error) { return newProposer(EP, o) })
	acq.Register("tes-sp", func(o acq.Options) (acq.Proposer, error) { return newProposer(SP, o) })
	acq.Register("tes", func(o acq.Options) (acq.Proposer, error) { return newDeliver(o) })
}

// newProposer maps acq.Options onto TES settings: Trusted → |X*|,
// PathFeatures → features per sample path, MCSamples → BaseSamples.
func newProposer(m method, o acq.Options) (acq.Proposer, error) {
	if o.Trusted < 0 {
		return nil, fmt.Errorf("tes: trusted maximizers must be ≥ 0 (0 = max(5, batch)), got %d", o.Trusted)
	}
	s := Settings{
		Method:      m,
		Trusted:     o.Trusted,
		Search:      trustedSettings{Features: o.PathFeaturesOrDefault()},
		BaseSamples: o.MCSamples,
	}
	return &proposer{Scorer: &scorer{Settings: s}, Optimize: o.Optimize}, nil
}

// scorer is the TES acquisition as an acq.Scorer. It remembers the last
// iteration's X* to seed the next search (§4, Remark 2), so use one Scorer
// per study. Safe for concurrent use.
type scorer struct {
	Settings Settings

	mu   sync.Mutex
	prev *mat.Dense
	last *Model
}

// Prepare implements acq.Scorer: it builds the iteration's Model (X*,
// conditioning, p(x*), EP or sample sets) and returns α(B) for batches of
// q points given the state's pending points.
func (s *scorer) Prepare(ctx context.Context, st *acq.State, q int) (acq.Func, error) {
	f, err := s.prepare(ctx, st, q)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (s *scorer) prepare(ctx context.Context, st *acq.State, q int) (*Func, error) {
	return s.prepareWith(ctx, st, q, q, st.Pending, nil)
}

// prepareWith builds the iteration's Model, with |X*| sized for a batch of
// qx points and the rows of extra as further candidate starts of the search
// for X* (next to the previous X*), and returns α for batches of q points
// given the pending points.
func (s *scorer) prepareWith(ctx context.Context, st *acq.State, q, qx int, pending, extra *mat.Dense) (*Func, error) {
	if st == nil || st.GP == nil || st.Rand == nil {
		return nil, fmt.Errorf("tes: state needs a GP and a random stream")
	}
	if q < 1 {
		return nil, fmt.Errorf("tes: batch size %d must be positive", q)
	}
	m, err := s.model(ctx, st, qx, extra)
	if err != nil {
		return nil, err
	}
	return m.Func(q, pending, st.Rand)
}

// model builds the iteration's Model with |X*| sized for a batch of qx
// points (Settings.Trusted, or max(5, qx) when that is zero) and the rows
// of extra as further candidate starts of the search for X*, and keeps its
// X* for the next iteration.
func (s *scorer) model(ctx context.Context, st *acq.State, qx int, extra *mat.Dense) (*Model, error) {
	k := s.Settings.Trusted
	if k <= 0 {
		k = max(5, qx)
	}
	prev := s.previous(st.GP.Dim())
	set := s.Settings.withLog(st.Log)
	// Pinned parameters: X* are the maximizers over the slice the study
	// proposes in, so α measures information about the maximizer there.
	set.Search.Optimize.Pinned, set.Search.Optimize.Canonical = st.Pinned, st.Canonical
	m, err := NewModel(ctx, st.GP, st.Rand, k, stackRows(prev, extra), set)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.prev, s.last = m.XStar, m
	s.mu.Unlock()
	return m, nil
}

// previous returns the last iteration's X* if its points have d
// coordinates, else nil.
func (s *scorer) previous(d int) *mat.Dense {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prev == nil {
		return nil
	}
	if _, pd := s.prev.Dims(); pd != d {
		return nil
	}
	return s.prev
}

// mapPrevious replaces the carried X* (if any) by f(X*), which may be nil.
func (s *scorer) mapPrevious(f func(*mat.Dense) *mat.Dense) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prev != nil {
		s.prev = f(s.prev)
	}
}

// lastModel returns the Model built by the latest Prepare (nil before).
func (s *scorer) lastModel() *Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// proposer prepares TES and maximizes α jointly over the batch with
// acq.Maximize. Zero fields of Optimize take TES defaults that depend on q
// (see optimizeDefaults; TES_sp scores half as many raw candidates; from
// largeN observations on, half as many iterations) rather
// than acq's, because α vanishes away from X* (most space-filling candidates
// score ≈ 0) and the X*-based starts of Func.Starts are the informative
// ones.
type proposer struct {
	Scorer   *scorer
	Optimize acq.OptimizeSettings
}

// optimizeDefaults fills the zero fields of s with TES's defaults for a batch
// of q points. α vanishes away from X*, so few space-filling candidates are
// scored (64 for q = 1, 32 up to q = 5, 16 beyond) and the X*-based starts
// of Func.Starts do most of the work; 2 restarts come from the raw
// candidates (1 beyond q = 5). L-BFGS-B runs at most 200 iterations up to
// q = 5, 60 up to q = 20 and 30 beyond — at q = 40 α stops improving
// (within its Monte-Carlo error) after ~15 — and stops once an iteration
// gains less than 1e-6·max(|α|,1) (1e-5 beyond q = 5), far below the
// estimator's standard error.
func optimizeDefaults(s acq.OptimizeSettings, q int) acq.OptimizeSettings {
	if s.RawSamples <= 0 {
		switch {
		case q == 1:
			s.RawSamples = 64
		case q <= 5:
			s.RawSamples = 32
		default:
			s.RawSamples = 16
		}
	}
	if s.Restarts <= 0 {
		s.Restarts = 2
		if q > 5 {
			s.Restarts = 1
		}
	}
	if s.MaxIter <= 0 {
		switch {
		case q <= 5:
			s.MaxIter = 200
		case q <= 20:
			s.MaxIter = 60
		default:
			s.MaxIter = 30
		}
	}
	if s.FuncTol <= 0 {
		s.FuncTol = 1e-6
		if q > 5 {
			s.FuncTol = 1e-5
		}
	}
	return s
}

// Propose implements acq.Proposer.
func (p *proposer) Propose(ctx context.Context, st *acq.State, q int) (*mat.Dense, error) {
	f, err := p.Scorer.prepare(ctx, st, q)
	if err != nil {
		return nil, err
	}
	return p.maximize(ctx, f, st, q)
}

// maximize returns the batch maximizing f. When X* holds a single distinct
// point, α ≡ 0 (there is no uncertainty about x* among X* to reduce), so
// every batch scores the same: rather than an arbitrary one it returns the
// first X*-based start — x* itself, then small perturbations of it — so that
// the evaluations sharpen the posterior where it is sure the maximum is.
func (p *proposer) maximize(ctx context.Context, f *Func, st *acq.State, q int) (*mat.Dense, error) {
	return p.maximizeFrom(ctx, f, st, q, nil)
}

// maximizeFrom is maximize with, when prev (q−1 rows) is non-nil, prev
// extended by each x* of X* as further starts (see BatchGains).
func (p *proposer) maximizeFrom(ctx context.Context, f *Func, st *acq.State, q int, prev *mat.Dense) (*mat.Dense, error) {
	if k, _ := f.m.XStar.Dims(); k == 1 {
		if starts := f.Starts(q); len(starts) > 0 {
			return starts[0], nil
		}
	}
	opt := p.Optimize
	if p.Scorer.Settings.Method == SP && opt.RawSamples <= 0 {
		// A TES_sp evaluation costs ~|F|²: score half as many raw
		// candidates (its X* starts are what usually wins).
		opt.RawSamples = optimizeDefaults(opt, q).RawSamples / 2
	}
	var af acq.Func = f
	if prev != nil {
		af = &extendedStarts{Func: f, prev: prev}
	}
	def := optimizeDefaults(opt, q)
	if opt.MaxIter <= 0 {
		def.MaxIter = largeMaxIter(def.MaxIter, st.GP.N())
	}
	x, _, err := acq.MaximizeMixed(ctx, acq.FeasibilityWeighted(af, st), q, st.GP.Dim(), acq.CategoriesOf(st.GP), st.Pin(def), st.Rand)
	if err != nil {
		return nil, fmt.Errorf("tes: optimize α: %w", err)
	}
	return x, nil
}
