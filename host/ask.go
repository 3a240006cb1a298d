package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
	"gonum.org/v1/gonum/mat"
)

// designIssued counts initial-design trials issued so far.
func (s *Study) designIssued() int {
	n := 0
	for _, t := range s.trials {
		if t.Iteration == 0 {
			n++
		}
	}
	return n
}

// makeDesign draws the initial design from the (seed, 0) design stream.
func (s *Study) makeDesign() [][]float64 {
	X := latinHypercube(s.opts.Init, s.space.Dim(), streamRand(s.seed, 0, streamDesign))
	if X == nil {
		return nil
	}
	// A warm start's prior (WarmPrior) opens the design with the source
	// studies' best points.
	for i, x := range s.opts.warmPoints {
		if u, err := s.space.ToUnit(x); err == nil && i < s.opts.Init {
			X.SetRow(i, u)
		}
	}
	return s.distinct(X, nil, 0, s.pins)
}

// Ask returns the next q trials to evaluate, recorded as pending.
//
// Points given to Enqueue come first: while any is waiting, Ask returns
// those (at most q; q = 0 means all). Then the points of the last batch
// that Run's evaluation budget left out (AutoBatch), if any: its
// iteration's next trials. While the initial design has points not yet issued, Ask returns those
// (at most q; q = 0 means all that remain). After that every call is one BO
// iteration: standardize the completed values, fit the GP (warm-started
// from the previous fit), let the acquisition propose q points (q = 0 means
// Options.Batch) given the trials still in flight as State.Pending, move
// duplicates of earlier points, and record the batch. With no completed
// evaluation yet, or when fitting or proposing fails, the iteration falls
// back to space-filling random points (logged, and noted in the stored
// model). Everything random comes from the study seed and the iteration.
func (s *Study) Ask(ctx context.Context, q int, opts ...AskOption) ([]Trial, error) {
	return s.ask(ctx, q, 0, opts...)
}

// ask is Ask, issuing at most atMost points of the iteration's batch when
// atMost is positive (Run's last batch with AutoBatch, cut to the budget
// left): the acquisition still proposes q points, and the rest wait as
// the study's cut points (s.cut), issued first if the budget grows, so
// that an extended study proposes what an uninterrupted longer one did.
func (s *Study) ask(ctx context.Context, q, atMost int, opts ...AskOption) ([]Trial, error) {
	if q < 0 {
		return nil, fmt.Errorf("ask: q must be ≥ 0, got %d", q)
	}
	pins, err := s.askPins(opts)
	if err != nil {
		return nil, err
	}
	// One proposal at a time: iteration t+1 starts from t's fit and the
	// acquisition's carried state.
	s.askMu.Lock()
	defer s.askMu.Unlock()
	s.mu.Lock()
	if queued := s.dequeue(q); len(queued) > 0 {
		s.mu.Unlock()
		return queued, nil
	}
	if len(s.cut) > 0 {
		defer s.mu.Unlock()
		return s.issueCutLocked(ctx, q, pins)
	}
	if issued := s.designIssued(); issued < len(s.design) {
		defer s.mu.Unlock()
		rem := len(s.design) - issued
		if q == 0 || q > rem {
			q = rem
		}
		return s.issue(ctx, store.Iteration{Iteration: 0}, s.design[issued:issued+q], issued, pins)
	}
	if q == 0 {
		q = s.opts.Batch
	}
	if limit, why := s.opts.batchLimit(); q > limit {
		s.mu.Unlock()
		return nil, fmt.Errorf("ask: %d points requested, more than %d, %s", q, limit, why)
	}
	if n, finite := s.space.Cardinality(); finite && float64(q) > n {
		s.mu.Unlock()
		return nil, fmt.Errorf("ask: %d points requested but the integer space holds only %.0f", q, n)
	}
	t := s.lastIter + 1
	v := s.viewLocked()
	s.mu.Unlock()

	// Fit and acquisition on the snapshot, no lock held: Tell, Trials and
	// Recommend go on meanwhile.
	it := store.Iteration{Iteration: t}
	X, ms, err := v.propose(ctx, t, q, &it, pins)
	if err != nil {
		return nil, s.uncarry(err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.adoptFitLocked(v)
	var steps []int
	if s.mf != nil {
		X, steps = s.mf.split(X, s.space.Dim())
	}
	rows := s.distinct(X, s.trials, t, pins)
	if atMost > 0 && atMost < len(rows) && s.mf == nil {
		ms.Cut, ms.CutFrom, rows = rows[atMost:], atMost, rows[:atMost]
	}
	if it.Model, err = json.Marshal(ms); err != nil {
		return nil, s.uncarry(fmt.Errorf("encode model: %w", err))
	}
	trials, err := s.issue(ctx, it, rows, 0, pins, steps...)
	if err != nil {
		return nil, s.uncarry(err)
	}
	s.cut, s.cutFrom = ms.Cut, ms.CutFrom
	if len(ms.AcqState) > 0 {
		s.carried = ms.AcqState
	}
	s.lastIter = t
	s.iters[t] = &iterInfo{fitS: it.FitSeconds, proposeS: it.ProposeSeconds, fallback: ms.Fallback}
	if len(ms.Params) > 0 || len(ms.Outputs) > 0 {
		s.lastModel = ms
	}
	return trials, nil
}

// issueCutLocked issues the last iteration's cut points (Study.cut): at
// most q of them (0: all), as that iteration's next trials (s.mu held).
func (s *Study) issueCutLocked(ctx context.Context, q int, pins *pinning) ([]Trial, error) {
	n := len(s.cut)
	if q > 0 && q < n {
		n = q
	}
	trials, err := s.issue(ctx, store.Iteration{Iteration: s.lastIter}, s.cut[:n], s.cutFrom, pins)
	if err != nil {
		return nil, err
	}
	s.cut, s.cutFrom = s.cut[n:], s.cutFrom+n
	if info := s.iters[s.lastIter]; info != nil {
		info.recorded = false // its record is made again with every trial
	}
	return trials, nil
}

// propose fits the model and runs the acquisition for iteration t, falling
// back to space-filling points when that is impossible.
func (s *Study) propose(ctx context.Context, t, q int, it *store.Iteration, pins *pinning) (*mat.Dense, *modelState, error) {
	d := s.space.Dim()
	fallback := func(reason string) (*mat.Dense, *modelState, error) {
		s.log.Warn().Int("iter", t).Str("reason", reason).Msg("proposing space-filling random points instead of the acquisition's")
		return latinHypercube(q, d, streamRand(s.seed, t, streamDesign)), &modelState{Fallback: reason}, nil
	}
	if s.opts.Suggester != nil {
		// A suggester works from the history itself: no GP needed.
		t0 := time.Now()
		X, err := s.suggest(ctx, t, q)
		it.ProposeSeconds = time.Since(t0).Seconds()
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, fmt.Errorf("propose iteration %d: %w", t, context.Cause(ctx))
			}
			return fallback(fmt.Sprintf("suggester %s: %v", s.opts.Acquisition, err))
		}
		return X, &modelState{}, nil
	}
	if len(s.info.Outputs) > 0 {
		return s.proposeMulti(ctx, t, q, it, fallback)
	}
	if s.mf != nil {
		return s.proposeFidelity(ctx, t, q, it, pins, fallback)
	}
	ds := s.dataset()
	if ds.n() == 0 {
		return fallback("no completed evaluations yet")
	}
	evaluated, imported := ds.n(), s.importedTrials()
	ds, reg := s.modelData(ds)
	fr, err := s.fitCached(ctx, ds, t)
	if err != nil {
		return fitFallback(ctx, t, err, fallback)
	}
	it.FitSeconds = fr.seconds
	pending := s.pendingMatrix()
	if reg != nil {
		pending = reg.RowsToUnit(pending, true)
	}
	st := &acq.State{GP: fr.gp, Best: ds.best(), Iter: t, Rand: streamRand(s.seed, t, streamPropose), Pending: pending, Log: s.log,
		Feasible: s.feasibility(t, reg), IntStep: s.intSteps(reg), Evaluated: evaluated, Imported: imported, Pinned: pins.inRegion(reg), Canonical: s.space.canonicalFunc(),
		Conditional: s.space.conditionalCoords()}
	t0 := time.Now()
	X, err := s.proposeBatch(ctx, st, q)
	it.ProposeSeconds = time.Since(t0).Seconds()
	if err == nil {
		X, err = s.avoidFailures(ctx, st, X, t)
	}
	if err == nil && reg != nil {
		X = reg.RowsFromUnit(X)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("propose iteration %d: %w", t, context.Cause(ctx))
		}
		X, ms, _ := fallback(fmt.Sprintf("acquisition %s: %v", s.opts.Acquisition, err))
		ms.Kernel, ms.Params, ms.Noise, ms.N = fr.state.Kernel, fr.state.Params, fr.state.Noise, fr.state.N
		return X, ms, s.carry(ms)
	}
	ms := *fr.state
	if reg != nil {
		ms.Local = ds.n()
	}
	return X, &ms, s.carry(&ms)
}

// proposeBatch runs the acquisition: q points, or with AutoBatch between
// 1 and q as its acq.Sizer decides.
func (s *Study) proposeBatch(ctx context.Context, st *acq.State, q int) (*mat.Dense, error) {
	d := s.space.Dim()
	if !s.opts.AutoBatch {
		X, err := s.proposer.Propose(ctx, st, q)
		if err == nil {
			err = checkBatch(X, q, d)
		}
		return X, err
	}
	sz, ok := s.proposer.(acq.Sizer)
	if !ok {
		return nil, fmt.Errorf("acquisition %s cannot size its batches (acq.Sizer)", s.opts.Acquisition)
	}
	X, err := sz.ProposeSized(ctx, st, q, s.opts.BatchGain)
	if err == nil && X == nil {
		err = fmt.Errorf("proposed no batch")
	}
	if err == nil {
		if r, _ := X.Dims(); r > q {
			err = fmt.Errorf("proposed %d points, more than the %d asked for", r, q)
		} else {
			err = checkBatch(X, r, d)
		}
	}
	return X, err
}

// carry records in ms what the acquisition carries to the next iteration
// (acq.Carrier), so that reopening the study restores it exactly.
func (s *Study) carry(ms *modelState) error {
	c, ok := s.proposer.(acq.Carrier)
	if !ok {
		return nil
	}
	st, err := c.CarriedState()
	if err != nil {
		return fmt.Errorf("acquisition %s: carried state: %w", s.opts.Acquisition, err)
	}
	ms.AcqState = st
	return nil
}

// uncarry puts the acquisition's carried state back to what it was after
// the last iteration the study issued, when a proposal failed or was
// cancelled after the acquisition ran (TES had replaced its trusted
// maximizers): the study then goes on, in this process, exactly as one
// reopened from the database would, and as an uninterrupted one. It
// returns err, or the restore's error with it.
func (s *Study) uncarry(err error) error {
	if c, ok := s.proposer.(acq.Carrier); ok {
		if rerr := c.RestoreState(s.carried); rerr != nil {
			return fmt.Errorf("%w; then restoring the acquisition's carried state: %v", err, rerr)
		}
	}
	return err
}

// fitFallback is what a proposal does when its fit failed with err: stop,
// when ctx is done (the fit was interrupted), or fall back.
func fitFallback(ctx context.Context, t int, err error, fallback func(string) (*mat.Dense, *modelState, error)) (*mat.Dense, *modelState, error) {
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("propose iteration %d: %w", t, err)
	}
	return fallback(err.Error())
}

// fitCached fits the GP for iteration t, reusing the fit Recommend made on
// the same data (a fit is a function of the data, the warm start and (seed,
// t), so reusing it changes nothing).
func (s *Study) fitCached(ctx context.Context, ds *dataset, t int) (*fitResult, error) {
	key := [2]int{s.version, t}
	if s.cache != nil && s.cacheKey == key {
		return s.cache, nil
	}
	fit := s.fitModel
	if s.hooks != nil && s.hooks.fit != nil {
		fit = s.hooks.fit
	}
	fr, err := fit(ctx, ds, s.lastModel, t)
	if err != nil {
		return nil, err
	}
	s.cache, s.cacheKey = fr, key
	return fr, nil
}

func checkBatch(X *mat.Dense, q, d int) error {
	if X == nil {
		return fmt.Errorf("proposed no batch")
	}
	r, c := X.Dims()
	if r != q || c != d {
		return fmt.Errorf("proposed a %d×%d batch, want %d×%d", r, c, q, d)
	}
	for i := range r {
		for j := range c {
			if v := X.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("proposed a non-finite coordinate %v", v)
			}
		}
	}
	return nil
}

// pendingMatrix stacks the unit-cube points of the trials in flight (nil if
// none).
func (s *Study) pendingMatrix() *mat.Dense {
	fl := s.inFlightLocked()
	if len(fl) == 0 {
		return nil
	}
	P := mat.NewDense(len(fl), s.space.Dim(), nil)
	for i, t := range fl {
		P.SetRow(i, t.U)
	}
	return P
}

// issue records new pending trials for the unit-cube points U, with the
// pinned coordinates set exactly (pins may be nil), and for a
// multi-fidelity study the steps they run to (none: to the end).
func (s *Study) issue(ctx context.Context, it store.Iteration, U [][]float64, firstIndex int, pins *pinning, steps ...int) ([]Trial, error) {
	trials := make([]Trial, len(U))
	for i, u := range U {
		u = append([]float64(nil), u...)
		pins.applyUnit(u)
		s.space.canonical(u) // a pin of an inactive parameter does not make it active
		x := s.space.ToNative(u)
		if pins != nil {
			pins.applyNative(x)
			x = s.space.activeOnly(x)
		}
		trials[i] = Trial{
			ID: len(s.trials) + i, Iteration: it.Iteration, Index: firstIndex + i,
			X: x, U: u, Status: Pending,
			CreatedAt: time.Now(), Names: s.space.names,
		}
		if i < len(steps) && steps[i] < s.mf.maxStep {
			trials[i].Meta = map[string]string{fidelityStepKey: strconv.Itoa(steps[i])}
		}
	}
	if s.db != nil {
		if err := addBatch(ctx, s.db, s.id, it, trials); err != nil {
			return nil, err
		}
	}
	s.trials = append(s.trials, trials...)
	out := make([]Trial, len(trials))
	copy(out, trials)
	return out, nil
}

// snapPinned is Snap of u with the pins (may be nil) set: before the snap,
// so that the branch a pinned parent selects keeps its children's drawn
// values (Snap sets inactive coordinates to their defaults), and again
// after it, then inactive coordinates to their defaults once more (a pin
// of a parameter its parent leaves inactive does not make it active).
func (s *Space) snapPinned(u []float64, pins *pinning) []float64 {
	if pins == nil {
		return s.Snap(u)
	}
	v := slices.Clone(u)
	pins.applyUnit(v)
	v = s.Snap(v)
	pins.applyUnit(v)
	s.canonical(v)
	return v
}

// distinct snaps the rows of X to the space, sets their pinned
// coordinates (pins may be nil), and moves every point that coincides
// (within dupTol) with an existing trial or an earlier row along its free
// coordinates.
func (s *Study) distinct(X *mat.Dense, existing []Trial, t int, pins *pinning) [][]float64 {
	rng := streamRand(s.seed, t, streamNudge)
	taken := make([][]float64, 0, len(existing)+X.RawMatrix().Rows)
	for _, tr := range existing {
		taken = append(taken, tr.U)
	}
	r, _ := X.Dims()
	out := make([][]float64, r)
	for i := range r {
		u := s.space.snapPinned(X.RawRowView(i), pins)
		if collides(u, taken) {
			v, ok := s.nudge(u, taken, rng, pins)
			if !ok {
				s.warnRepeat(t)
			}
			u = v
		}
		out[i] = u
		taken = append(taken, u)
	}
	return out
}

// warnRepeat says, once per Study, that a proposal repeats a point already
// taken because no unused one was found: a used-up integer space repeats
// points at every later iteration, and one warning says so.
func (s *Study) warnRepeat(t int) {
	if s.repeatWarned {
		return
	}
	s.repeatWarned = true
	ev := s.log.Warn().Int("iter", t)
	if n, finite := s.space.Cardinality(); finite {
		ev.Msgf("no unused point left among the integer space's %.0f points: proposals repeat evaluated points from now on (warned once)", n)
		return
	}
	ev.Msg("no unused point found near a duplicate proposal: evaluating it again, and any later ones (warned once)")
}

func collides(u []float64, taken [][]float64) bool {
	for _, v := range taken {
		same := true
		for j := range u {
			if math.Abs(u[j]-v[j]) > dupTol {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// nudge moves u to a nearby unused point: Gaussian steps of growing size on
// the continuous coordinates, and growing ±steps on one integer coordinate
// (all-integer spaces, or when continuous steps keep colliding), then
// uniform random points. ok is false when nothing unused was found.
func (s *Study) nudge(u []float64, taken [][]float64, rng interface {
	NormFloat64() float64
	Float64() float64
	IntN(int) int
}, pins *pinning) (v []float64, ok bool) {
	d := len(u)
	var ints []int
	for i, p := range s.space.params {
		if p.Kind == sdk.Int {
			ints = append(ints, i)
		}
	}
	cont := len(ints) < d
	for a := 1; a <= 200; a++ {
		v = append([]float64(nil), u...)
		if cont {
			r := 1e-4 * math.Pow(2, float64(min(a-1, 12)))
			for i, p := range s.space.params {
				if p.Kind != sdk.Int {
					v[i] = clamp01(v[i] + r*rng.NormFloat64())
				}
			}
		}
		if len(ints) > 0 && (!cont || a > 20) {
			i := ints[rng.IntN(len(ints))]
			step := float64(1+rng.IntN(a)) / s.space.n[i]
			if rng.IntN(2) == 0 {
				step = -step
			}
			v[i] = clamp01(v[i] + step)
		}
		v = s.space.snapPinned(v, pins)
		if !collides(v, taken) {
			return v, true
		}
	}
	for range 1000 {
		v = make([]float64, d)
		for i := range v {
			v[i] = rng.Float64()
		}
		v = s.space.snapPinned(v, pins)
		if !collides(v, taken) {
			return v, true
		}
	}
	return u, false
}
