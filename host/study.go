package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// Trial is one proposed point and, once finished, its outcome: X in native
// units, U the same point in the unit cube, Status, Value (native units, valid
// when complete), Error (when failed), attempts and timings.
type Trial = store.Trial

// Trial states (see store.Status).
const (
	Pending  = store.Pending
	Running  = store.Running
	Complete = store.Complete
	Failed   = store.Failed
)

// ErrNotInFlight is returned by Tell for a trial that is unknown or already
// finished.
var ErrNotInFlight = errors.New("trial is not in flight")

// dupTol is the L∞ distance in the unit cube below which two points count as
// the same point (and a new proposal is nudged away).
const dupTol = 1e-6

// Study is one optimization: an objective's space, the options, and every
// trial so far. Drive it with Run (the host evaluates) or with Ask and Tell
// (the caller evaluates); both produce the same trials for the same seed.
// A Study is safe for concurrent use; Ask holds the study while it fits and
// proposes, so Tell calls made meanwhile wait.
type Study struct {
	mu       sync.Mutex
	cbMu     sync.Mutex // serializes callbacks
	name     string
	info     sdk.Info
	space    *Space
	opts     Options
	seed     uint64
	proposer acq.Proposer
	db       *store.DB // through the lease once it is taken (lease.go)
	id       int64
	log      zerolog.Logger
	lease    *studyLease // nil without a DB

	trials    []Trial
	queue     []int       // IDs of enqueued trials not yet asked (Enqueue)
	design    [][]float64 // initial design (unit cube, snapped), a function of the seed
	lastIter  int         // largest BO iteration issued (0: none yet)
	iters     map[int]*iterInfo
	lastModel *modelState // most recent fitted hyper-parameters (warm start)
	version   int         // bumped by every completed evaluation
	cache     *fitResult
	cacheKey  [2]int // (version, iteration) cache was fitted for

	lastRecord      *Record // the latest iteration's stored record (reopened studies)
	noiseFreeBroken bool    // the objective's EvaluateNoiseFree failed once
	repeatWarned    bool    // warnRepeat has warned
	// refine: recommend by maximizing the posterior mean over the cube.
	// Set from Options.Recommend when the study is made (refine → true;
	// auto and evaluated → false, as Ask/Tell has no objective) and again
	// by Run's attach, where auto refines if the objective is noise-free.
	refine bool

	// fitHook replaces fitModel in benchmarks that measure the host's own
	// overhead.
	fitHook func(ds *dataset, warm *modelState, t int) (*fitResult, error)
	// gpFitHook replaces gp.Fit inside fitModel in tests that inspect the
	// fit's settings (the warm start).
	gpFitHook func(X *mat.Dense, y []float64, fs gp.FitSettings) (*gp.GP, error)
}

type iterInfo struct {
	fitS, proposeS float64
	recorded       bool
	fallback       string
}

// storedSettings is what a study keeps besides its space: the options plus
// the objective's full Info (its optimum and direction).
type storedSettings struct {
	Options
	Info sdk.Info `json:"info"`
}

// NewStudy starts a study of an objective described by info. With o.DB it
// is stored under o.Name (which must be new), migrating a database opened
// with store.Options.DeferMigration once everything else is checked; see
// Options for the rest.
func NewStudy(ctx context.Context, info sdk.Info, o Options) (*Study, error) {
	o = o.Normalized()
	if err := o.validate(); err != nil {
		return nil, err
	}
	space, err := NewSpace(info.Params)
	if err != nil {
		return nil, fmt.Errorf("objective %s: %w", info.Name, err)
	}
	if err := checkCardinality(space, o); err != nil {
		return nil, fmt.Errorf("objective %s: %w", info.Name, err)
	}
	if err := checkDim(space); err != nil {
		return nil, fmt.Errorf("objective %s: %w", info.Name, err)
	}
	prop := o.Proposer
	if prop == nil {
		if prop, err = newProposer(o.Acquisition, o.AcqOptions); err != nil {
			return nil, err
		}
	}
	if o.Name == "" {
		o.Name = DefaultStudyName(info.Name, time.Now())
	}
	if err := CheckStudyName(o.Name); err != nil {
		return nil, err
	}
	s := &Study{
		name: o.Name, info: info, space: space, opts: o, seed: o.Seed, proposer: prop,
		db: o.DB, iters: map[int]*iterInfo{},
		refine: refines(o.Recommend, false),
		log:    o.Logger.With().Str("study", o.Name).Logger(),
	}
	s.design = s.makeDesign()
	if s.db != nil {
		spaceJSON, err := json.Marshal(info.Params)
		if err != nil {
			return nil, fmt.Errorf("encode space: %w", err)
		}
		settings, err := json.Marshal(storedSettings{Options: o, Info: info})
		if err != nil {
			return nil, fmt.Errorf("encode settings: %w", err)
		}
		row := &store.Study{Name: o.Name, Objective: info.Name, Acquisition: o.Acquisition, Seed: o.Seed,
			Space: spaceJSON, Settings: settings}
		if s.db.MigrationPending() {
			// Every other input is checked: upgrade a database opened with
			// store.Options.DeferMigration only once the name is known to be
			// free too. CreateStudy checks the name again, atomically.
			if _, err := s.db.Study(ctx, o.Name); err == nil {
				return nil, fmt.Errorf("create study: study %q %w in %s", o.Name, store.ErrExists, s.db.Path())
			} else if !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			if err := s.db.Migrate(ctx); err != nil {
				return nil, err
			}
		}
		if err := s.db.CreateStudy(ctx, row); err != nil {
			return nil, err
		}
		s.id = row.ID
		if err := s.takeLease(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// checkCardinality refuses batches (and initial designs) larger than an
// all-integer space holds.
func checkCardinality(space *Space, o Options) error {
	n, finite := space.Cardinality()
	if !finite {
		return nil
	}
	if float64(o.Batch) > n {
		return fmt.Errorf("batch %d is larger than the %.0f distinct points of the integer space", o.Batch, n)
	}
	if float64(o.Init) > n {
		return fmt.Errorf("initial design of %d points is larger than the %.0f distinct points of the integer space", o.Init, n)
	}
	return nil
}

// OpenStudy reopens a stored study to continue it. Its settings come from
// the database; from o only the per-process fields are used (Proposer,
// Grace, OnIteration, OnTrial, Logger), plus Iters when positive (a new
// iteration budget, stored) and Parallel when positive. A database opened
// with store.Options.DeferMigration is migrated once the study has been
// read and checked.
func OpenStudy(ctx context.Context, db *store.DB, name string, o Options) (*Study, error) {
	row, st, err := loadSettings(ctx, db, name)
	if err != nil {
		return nil, err
	}
	opts := st.Options
	opts.Name, opts.DB, opts.Seed = name, db, row.Seed
	opts.Proposer, opts.OnIteration, opts.OnTrial, opts.Logger = o.Proposer, o.OnIteration, o.OnTrial, o.Logger
	opts.Grace = o.Grace
	opts = opts.Normalized()
	changed := false
	if o.Iters > 0 && o.Iters != opts.Iters {
		opts.Iters, changed = o.Iters, true
	}
	if o.Parallel > 0 {
		opts.Parallel = o.Parallel
	}
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	space, err := NewSpace(st.Info.Params)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	prop := opts.Proposer
	if prop == nil {
		if prop, err = newProposer(opts.Acquisition, opts.AcqOptions); err != nil {
			return nil, fmt.Errorf("study %q: %w", name, err)
		}
	}
	s := &Study{
		name: name, info: st.Info, space: space, opts: opts, seed: row.Seed, proposer: prop,
		db: db, id: row.ID, iters: map[int]*iterInfo{},
		refine: refines(opts.Recommend, false),
		log:    opts.Logger.With().Str("study", name).Logger(),
	}
	s.design = s.makeDesign()
	// Refuse a budget below what has run before the lease, whose taking
	// writes to the database.
	if err := checkStoredBudget(ctx, db, row.ID, o.Iters); err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	// Only the lease's holder may continue the study: take it before
	// reading the trials, which another holder could still be changing.
	if err := s.takeLease(ctx); err != nil {
		return nil, err
	}
	opened := false
	defer func() {
		if !opened {
			s.Close()
		}
	}()
	if s.trials, err = db.Trials(ctx, row.ID); err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	for i, t := range s.trials {
		if t.ID != i {
			return nil, fmt.Errorf("study %q: trial IDs are not contiguous at %d", name, i)
		}
		s.trials[i].Names = space.names
		if t.Status == store.Complete {
			s.version++
		}
	}
	its, err := db.Iterations(ctx, row.ID)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	var carried json.RawMessage // the acquisition's state after the latest iteration
	var lastRecord json.RawMessage
	for _, it := range its {
		info := &iterInfo{fitS: it.FitSeconds, proposeS: it.ProposeSeconds, recorded: it.Record != nil}
		s.iters[it.Iteration] = info
		s.lastIter = max(s.lastIter, it.Iteration)
		if it.Record != nil && it.Iteration == s.lastIter {
			lastRecord = it.Record
		}
		if it.Model != nil {
			var ms modelState
			if err := json.Unmarshal(it.Model, &ms); err != nil {
				return nil, fmt.Errorf("study %q iteration %d: bad model: %w", name, it.Iteration, err)
			}
			info.fallback = ms.Fallback
			if len(ms.Params) > 0 {
				s.lastModel = &ms
			}
			if len(ms.AcqState) > 0 {
				carried = ms.AcqState
			}
		}
	}
	if err := s.restoreLastRecord(lastRecord); err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	if c, ok := prop.(acq.Carrier); ok && carried != nil {
		if err := c.RestoreState(carried); err != nil {
			return nil, fmt.Errorf("study %q: %w", name, err)
		}
	}
	if changed {
		settings, err := json.Marshal(storedSettings{Options: opts, Info: st.Info})
		if err != nil {
			return nil, err
		}
		if err := s.db.UpdateSettings(ctx, row.ID, settings); err != nil {
			return nil, fmt.Errorf("study %q: %w", name, err)
		}
	}
	opened = true
	return s, nil
}

// SetCallbacks replaces Options.OnIteration and Options.OnTrial (nil
// removes one). Call it before Run.
func (s *Study) SetCallbacks(onIteration func(Record), onTrial func(Trial)) {
	s.cbMu.Lock()
	defer s.cbMu.Unlock()
	s.opts.OnIteration, s.opts.OnTrial = onIteration, onTrial
}

// StoredSettings returns a stored study's options (defaults filled in; no
// per-process fields) and its objective's Info, without opening the study.
func StoredSettings(ctx context.Context, db *store.DB, name string) (Options, sdk.Info, error) {
	row, st, err := loadSettings(ctx, db, name)
	if err != nil {
		return Options{}, sdk.Info{}, err
	}
	o := st.Options.Stored()
	o.Name, o.Seed = name, row.Seed
	return o, st.Info, nil
}

func loadSettings(ctx context.Context, db *store.DB, name string) (*store.Study, *storedSettings, error) {
	row, err := db.Study(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	st, err := decodeSettings(row.Settings)
	if err != nil {
		return nil, nil, fmt.Errorf("study %q: %w", name, err)
	}
	return row, st, nil
}

// decodeSettings decodes a study's stored settings, written by this or an
// older version, into normalized options with the meaning they were stored
// with. Stored options were always normalized, so a stored zero means what
// it meant then: noise_var 0 without zero_noise (older versions) is a
// noise-free study, a missing gp_prior (stored before the option
// existed) is PriorWeak, and a missing kernel is KernelSE (the default
// before DefaultKernel became Matérn-5/2).
func decodeSettings(b []byte) (*storedSettings, error) {
	var st storedSettings
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("bad stored settings: %w", err)
	}
	if st.NoiseVar == 0 {
		st.ZeroNoise = true
	}
	if st.GPPrior == "" {
		st.GPPrior = PriorWeak
	}
	if st.Kernel == "" {
		st.Kernel = KernelSE
	}
	st.Options = st.Options.Normalized()
	return &st, nil
}

// Name returns the study's name.
func (s *Study) Name() string { return s.name }

// Info returns the objective's description the study was created with.
func (s *Study) Info() sdk.Info { return s.info }

// Space returns the study's search-space transform.
func (s *Study) Space() *Space { return s.space }

// Seed returns the study seed.
func (s *Study) Seed() uint64 { return s.seed }

// Settings returns the study's effective options (defaults filled in).
func (s *Study) Settings() Options {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts
}

// Trials returns a copy of every trial, in ID order.
func (s *Study) Trials() []Trial {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Trial, len(s.trials))
	copy(out, s.trials)
	return out
}

// InFlight returns the trials that were asked for but not yet told, in ID
// order (after a crash: those to re-run).
func (s *Study) InFlight() []Trial {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlightLocked()
}

func (s *Study) inFlightLocked() []Trial {
	var out []Trial
	for _, t := range s.trials {
		if !t.Status.Done() {
			out = append(out, t)
		}
	}
	return out
}

// Iteration returns the last BO iteration issued (0 while in the initial
// design).
func (s *Study) Iteration() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastIter
}

// Done reports whether the study has issued its whole initial design and
// all its iterations and has nothing in flight.
func (s *Study) Done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doneLocked()
}

// Recorded reports whether the latest BO iteration's record is stored (true
// before the first iteration). A process stopped between an iteration's
// last evaluation and its record leaves it false even when the study is
// Done; Run then makes the record.
func (s *Study) Recorded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := s.iters[s.lastIter]
	return s.lastIter == 0 || info == nil || info.recorded
}

func (s *Study) doneLocked() bool {
	return s.designIssued() == len(s.design) && s.lastIter >= s.opts.Iters && len(s.inFlightLocked()) == 0
}

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
	return s.distinct(X, nil, 0)
}

// Ask returns the next q trials to evaluate, recorded as pending.
//
// Points given to Enqueue come first: while any is waiting, Ask returns
// those (at most q; q = 0 means all). While the initial design has points not yet issued, Ask returns those
// (at most q; q = 0 means all that remain). After that every call is one BO
// iteration: standardize the completed values, fit the GP (warm-started
// from the previous fit), let the acquisition propose q points (q = 0 means
// Options.Batch) given the trials still in flight as State.Pending, move
// duplicates of earlier points, and record the batch. With no completed
// evaluation yet, or when fitting or proposing fails, the iteration falls
// back to space-filling random points (logged, and noted in the stored
// model). Everything random comes from the study seed and the iteration.
func (s *Study) Ask(ctx context.Context, q int) ([]Trial, error) {
	if q < 0 {
		return nil, fmt.Errorf("ask: q must be ≥ 0, got %d", q)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if queued := s.dequeue(q); len(queued) > 0 {
		return queued, nil
	}
	if issued := s.designIssued(); issued < len(s.design) {
		rem := len(s.design) - issued
		if q == 0 || q > rem {
			q = rem
		}
		return s.issue(ctx, store.Iteration{Iteration: 0}, s.design[issued:issued+q], issued)
	}
	if q == 0 {
		q = s.opts.Batch
	}
	if limit, why := s.opts.batchLimit(); q > limit {
		return nil, fmt.Errorf("ask: %d points requested, more than %d, %s", q, limit, why)
	}
	if n, finite := s.space.Cardinality(); finite && float64(q) > n {
		return nil, fmt.Errorf("ask: %d points requested but the integer space holds only %.0f", q, n)
	}
	t := s.lastIter + 1
	it := store.Iteration{Iteration: t}
	X, ms, err := s.propose(ctx, t, q, &it)
	if err != nil {
		return nil, err
	}
	if it.Model, err = json.Marshal(ms); err != nil {
		return nil, fmt.Errorf("encode model: %w", err)
	}
	trials, err := s.issue(ctx, it, s.distinct(X, s.trials, t), 0)
	if err != nil {
		return nil, err
	}
	s.lastIter = t
	s.iters[t] = &iterInfo{fitS: it.FitSeconds, proposeS: it.ProposeSeconds, fallback: ms.Fallback}
	if len(ms.Params) > 0 {
		s.lastModel = ms
	}
	return trials, nil
}

// propose fits the model and runs the acquisition for iteration t, falling
// back to space-filling points when that is impossible.
func (s *Study) propose(ctx context.Context, t, q int, it *store.Iteration) (*mat.Dense, *modelState, error) {
	d := s.space.Dim()
	fallback := func(reason string) (*mat.Dense, *modelState, error) {
		s.log.Warn().Int("iter", t).Str("reason", reason).Msg("proposing space-filling random points instead of the acquisition's")
		return latinHypercube(q, d, streamRand(s.seed, t, streamDesign)), &modelState{Fallback: reason}, nil
	}
	if sp, ok := s.proposer.(*suggesterProposer); ok {
		// A suggester works from the history itself: no GP needed.
		t0 := time.Now()
		X, err := sp.suggest(ctx, s, t, q)
		it.ProposeSeconds = time.Since(t0).Seconds()
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, fmt.Errorf("propose iteration %d: %w", t, context.Cause(ctx))
			}
			return fallback(fmt.Sprintf("suggester %s: %v", s.opts.Acquisition, err))
		}
		return X, &modelState{}, nil
	}
	ds := s.dataset()
	if ds.n() == 0 {
		return fallback("no completed evaluations yet")
	}
	evaluated := ds.n()
	ds, reg := s.modelData(ds)
	fr, err := s.fitCached(ds, t)
	if err != nil {
		return fallback(err.Error())
	}
	it.FitSeconds = fr.seconds
	pending := s.pendingMatrix()
	if reg != nil {
		pending = reg.RowsToUnit(pending, true)
	}
	st := &acq.State{GP: fr.gp, Best: ds.best(), Iter: t, Rand: streamRand(s.seed, t, streamPropose), Pending: pending, Log: s.log,
		Feasible: s.feasibility(t, reg), IntStep: s.intSteps(reg), Evaluated: evaluated}
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

// fitCached fits the GP for iteration t, reusing the fit Recommend made on
// the same data (a fit is a function of the data, the warm start and (seed,
// t), so reusing it changes nothing).
func (s *Study) fitCached(ds *dataset, t int) (*fitResult, error) {
	key := [2]int{s.version, t}
	if s.cache != nil && s.cacheKey == key {
		return s.cache, nil
	}
	fit := s.fitModel
	if s.fitHook != nil {
		fit = s.fitHook
	}
	fr, err := fit(ds, s.lastModel, t)
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

// issue records new pending trials for the unit-cube points U.
func (s *Study) issue(ctx context.Context, it store.Iteration, U [][]float64, firstIndex int) ([]Trial, error) {
	trials := make([]Trial, len(U))
	for i, u := range U {
		trials[i] = Trial{
			ID: len(s.trials) + i, Iteration: it.Iteration, Index: firstIndex + i,
			X: s.space.ToNative(u), U: append([]float64(nil), u...), Status: store.Pending,
			CreatedAt: time.Now(), Names: s.space.names,
		}
	}
	if s.db != nil {
		if err := s.db.AddBatch(ctx, s.id, it, trials); err != nil {
			return nil, err
		}
	}
	s.trials = append(s.trials, trials...)
	out := make([]Trial, len(trials))
	copy(out, trials)
	return out, nil
}

// distinct snaps the rows of X to the space and moves every point that
// coincides (within dupTol) with an existing trial or an earlier row.
func (s *Study) distinct(X *mat.Dense, existing []Trial, t int) [][]float64 {
	rng := streamRand(s.seed, t, streamNudge)
	taken := make([][]float64, 0, len(existing)+X.RawMatrix().Rows)
	for _, tr := range existing {
		taken = append(taken, tr.U)
	}
	r, _ := X.Dims()
	out := make([][]float64, r)
	for i := range r {
		u := s.space.Snap(X.RawRowView(i))
		if collides(u, taken) {
			v, ok := s.nudge(u, taken, rng)
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
}) (v []float64, ok bool) {
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
		v = s.space.Snap(v)
		if !collides(v, taken) {
			return v, true
		}
	}
	for range 1000 {
		v = make([]float64, d)
		for i := range v {
			v[i] = rng.Float64()
		}
		v = s.space.Snap(v)
		if !collides(v, taken) {
			return v, true
		}
	}
	return u, false
}

// evalStats describes how an evaluation went (zero for Tell).
type evalStats struct {
	attempts int
	started  time.Time
	seconds  float64
}

// Tell records the outcome of trial trialID: its value, or the error that
// made it fail (err != nil). A NaN or infinite value is recorded as a
// failure. Failed trials are kept but never shown to the GP. ctx bounds the
// write to the study's database.
func (s *Study) Tell(ctx context.Context, trialID int, value float64, err error) error {
	return s.TellResult(ctx, trialID, sdk.Result{Value: value}, err)
}

// TellResult is Tell with the metadata of an sdk.Result.
func (s *Study) TellResult(ctx context.Context, trialID int, r sdk.Result, err error) error {
	return s.finish(ctx, trialID, r, err, evalStats{})
}

func (s *Study) finish(ctx context.Context, id int, r sdk.Result, evalErr error, st evalStats) error {
	s.mu.Lock()
	if id < 0 || id >= len(s.trials) || s.trials[id].Status.Done() {
		s.mu.Unlock()
		return fmt.Errorf("tell trial %d: %w", id, ErrNotInFlight)
	}
	t := s.trials[id]
	if evalErr == nil && (math.IsNaN(r.Value) || math.IsInf(r.Value, 0)) {
		evalErr = fmt.Errorf("objective returned %v", r.Value)
	}
	if evalErr != nil {
		t.Status, t.Error, t.Value = store.Failed, store.CleanError(evalErr.Error()), 0
	} else {
		t.Status, t.Value, t.Meta = store.Complete, r.Value, r.Meta
	}
	t.Attempts = max(st.attempts, 1)
	if !st.started.IsZero() {
		t.StartedAt = st.started
	}
	t.EvalSeconds = st.seconds
	t.FinishedAt = time.Now()
	if s.db != nil {
		if err := s.db.FinishTrial(ctx, s.id, &t); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.trials[id] = t
	if t.Status == store.Complete {
		s.version++
	}
	s.mu.Unlock()
	s.cbMu.Lock()
	if s.opts.OnTrial != nil {
		s.opts.OnTrial(t)
	}
	s.cbMu.Unlock()
	return nil
}

// start marks a trial running (attempt counts from 1).
func (s *Study) start(id, attempt int, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trials[id].Status.Done() {
		return fmt.Errorf("start trial %d: %w", id, ErrNotInFlight)
	}
	if s.db != nil {
		if err := s.db.StartTrial(context.Background(), s.id, id, attempt, at); err != nil {
			return err
		}
	}
	s.trials[id].Status, s.trials[id].Attempts, s.trials[id].StartedAt = store.Running, attempt, at
	return nil
}

// counts returns the numbers of complete and failed trials.
func (s *Study) counts() (complete, failed int) {
	for _, t := range s.trials {
		switch t.Status {
		case store.Complete:
			complete++
		case store.Failed:
			failed++
		}
	}
	return
}

// iterationTrials returns the trials of iteration it in batch order.
func (s *Study) iterationTrials(it int) []Trial {
	var out []Trial
	for _, t := range s.trials {
		if t.Iteration == it {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}
