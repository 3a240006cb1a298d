package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/prune"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
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
// A Study is safe for concurrent use. Ask fits and proposes on a snapshot
// of the study with no lock held, so Tell calls made meanwhile go through
// at once; proposals themselves are made one at a time.
type Study struct {
	mu       sync.Mutex  // guards the fields below; never held across a fit or an acquisition (view.go)
	askMu    sync.Mutex  // serializes proposals (Ask)
	cbMu     sync.Mutex  // serializes callbacks
	cbErr    error       // the first callback panic (callback), guarded by cbMu
	running  atomic.Bool // Run is under way (a second concurrent Run is refused)
	name     string
	info     sdk.Info
	space    *Space
	opts     Options
	seed     uint64
	proposer acq.Proposer
	pruner   prune.Pruner  // nil: no early stopping (Options.Pruning)
	mf       *fidelity     // nil: not multi-fidelity (Options.MultiFidelity)
	db       store.Storage // through the lease once it is taken (lease.go)
	id       int64
	log      zerolog.Logger
	lease    *studyLease // nil without a DB

	trials    []Trial
	queue     []int               // IDs of enqueued trials not yet asked (Enqueue)
	reports   map[int]*trialCurve // intermediate values of trials told by Report (Ask/Tell)
	design    [][]float64         // initial design (unit cube, snapped), a function of the seed
	pins      *pinning            // Options.Fixed (nil: none)
	lastIter  int                 // largest BO iteration issued (0: none yet)
	iters     map[int]*iterInfo
	lastModel *modelState // most recent fitted hyper-parameters (warm start)
	// cut: the last iteration's points the budget left out, not yet
	// issued, from batch index cutFrom on (modelState.Cut).
	cut     [][]float64
	cutFrom int
	// carried is the acquisition's carried state (acq.Carrier) after the
	// last issued iteration that stored one, nil before: what a failed
	// proposal puts back (uncarry).
	carried  json.RawMessage
	version  int // bumped by every completed evaluation
	cache    *fitResult
	cacheKey [2]int // (version, iteration) cache was fitted for

	lastRecord      *Record // the latest iteration's stored record (reopened studies)
	noiseFreeBroken bool    // the objective's EvaluateNoiseFree failed once
	repeatWarned    bool    // warnRepeat has warned
	// refine: recommend by maximizing the posterior mean over the cube.
	// Set from Options.Recommend when the study is made (refine → true;
	// auto and evaluated → false, as Ask/Tell has no objective) and again
	// by Run's attach, where auto refines if the objective is noise-free.
	refine bool
	// configured: Start has sent the objective its run parameters, so
	// Run's attach does not send them again (once per plugin process).
	configured bool

	// hooks is nil outside tests (see testHooks).
	hooks *testHooks
}

// testHooks let tests replace the model fit; a study's views share them.
type testHooks struct {
	// fit replaces fitModel in benchmarks that measure the host's own
	// overhead.
	fit func(ctx context.Context, ds *dataset, warm *modelState, t int) (*fitResult, error)
	// gpFit replaces gp.Fit inside fitModel in tests that inspect the
	// fit's settings (the warm start).
	gpFit func(X *mat.Dense, y []float64, fs gp.FitSettings) (*gp.GP, error)
}

type iterInfo struct {
	fitS, proposeS float64
	recorded       bool
	fallback       string
}

// NewStudy starts a study of an objective described by info. With o.DB it
// is stored under o.Name (which must be new), migrating a database opened
// with store.Options.DeferMigration once everything else is checked; see
// Options for the rest.
func NewStudy(ctx context.Context, info sdk.Info, o Options) (*Study, error) {
	if o.DB != nil {
		if err := checkStorage(o.DB); err != nil {
			return nil, err
		}
	}
	s, err := newStudy(info, o.Normalized())
	if err == nil && o.DB == nil && len(o.WarmStart) > 0 {
		err = errors.New("warm start: Options.DB is required (the source studies are read from it)")
	}
	if err != nil || o.DB == nil {
		return s, err
	}
	if err := s.create(ctx, o.DB.store()); err != nil {
		return nil, err
	}
	return s, nil
}

// infoSpace validates an objective's Info and returns its space. Plugins'
// Infos are checked by the loader too, but an embedding program's
// (NewStudy, Ask/Tell) and a stored study's (OpenStudy, stored by a version
// with other bounds, such as sdk.MaxObjectives) reach the host only here.
func infoSpace(info sdk.Info) (*Space, error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	return NewSpace(info.Params)
}

// newStudy checks normalized options o against the objective's info and
// builds the study in memory: every refusal of a new study happens here,
// before anything is written.
func newStudy(info sdk.Info, o Options) (*Study, error) {
	o = resolveInit(o, info)
	if err := o.validate(); err != nil {
		return nil, err
	}
	space, err := infoSpace(info)
	if err != nil {
		return nil, err
	}
	if err := checkCardinality(space, o); err != nil {
		return nil, fmt.Errorf("objective %s: %w", info.Name, err)
	}
	if err := checkDim(space); err != nil {
		return nil, fmt.Errorf("objective %s: %w", info.Name, err)
	}
	pins, err := space.pins(o.Fixed)
	if err != nil {
		return nil, fmt.Errorf("objective %s: %w", info.Name, err)
	}
	if pins != nil && space.freeCoords(pins) == 0 {
		return nil, fmt.Errorf("objective %s: every parameter is fixed (Options.Fixed, --fix), so every proposal would be the same point: fix fewer", info.Name)
	}
	prop := o.Proposer
	if prop == nil && o.Suggester == nil {
		if prop, err = acq.Lookup(o.Acquisition, o.AcqOptions); err != nil {
			return nil, err
		}
	}
	if err := checkPathPhases(space, prop, o.Batch); err != nil {
		return nil, fmt.Errorf("objective %s: %w", info.Name, err)
	}
	pruner, err := o.Pruning.pruner(info)
	if err != nil {
		return nil, err
	}
	if prop, err = multiProposer(info, &o, prop); err != nil {
		return nil, err
	}
	if err := continuousProposer(info, o, prop); err != nil {
		return nil, err
	}
	if len(o.RefPoint) > 0 {
		if err := sdk.ValidRefPoint(o.RefPoint, len(info.Objectives())); err != nil {
			return nil, fmt.Errorf("the reference point given (Options.RefPoint, --ref-point) for objective %s: %w", info.Name, err)
		}
		info.RefPoint = append([]float64(nil), o.RefPoint...)
		o.RefPoint = nil // kept in the stored Info
	}
	o.Pruning = o.Pruning.resolvedModel(o, info)
	mf, err := newFidelity(o.MultiFidelity, o.Pruning, info, space, prop)
	if err != nil {
		return nil, err
	}
	if pruner != nil && len(info.Outputs) > 0 {
		return nil, fmt.Errorf("objective %s has %d outputs: early stopping (a pruner) judges evaluations by one reported value; run it without one", info.Name, len(info.Outputs))
	}
	if o.Name == "" {
		o.Name = DefaultStudyName(info.Name, time.Now())
	}
	if err := CheckStudyName(o.Name); err != nil {
		return nil, err
	}
	s := &Study{
		name: o.Name, info: info, space: space, opts: o, seed: o.Seed, proposer: prop, pruner: pruner, mf: mf,
		iters:  map[int]*iterInfo{},
		refine: refines(o.Recommend, false),
		log:    o.Logger.With().Str("study", o.Name).Logger(),
		pins:   pins,
	}
	s.design = s.makeDesign()
	return s, nil
}

// resolveInit settles Options.InitFromObjective: a zero Init becomes the
// objective's declared design (sdk.Info.InitialDesign), else
// DefaultObjectiveInit, capped at the points of a small integer space.
func resolveInit(o Options, info sdk.Info) Options {
	if !o.InitFromObjective {
		return o
	}
	o.InitFromObjective = false
	if o.Init != 0 || o.NoInit {
		return o
	}
	o.Init = DefaultObjectiveInit
	if info.InitialDesign > 0 {
		o.Init = info.InitialDesign
	}
	if sp, err := NewSpace(info.Params); err == nil {
		if n, finite := sp.Cardinality(); finite && float64(o.Init) > n {
			o.Init = int(n)
		}
	}
	return o
}

// create stores the new study in db under its name and takes its lease.
func (s *Study) create(ctx context.Context, db store.Storage) error {
	var imp *imported
	if len(s.opts.WarmStart) > 0 {
		var err error
		if imp, err = s.readWarmStart(ctx, db); err != nil {
			return err
		}
		if err := checkImportBudget(len(imp.trials), s.opts); err != nil {
			return err
		}
		if len(imp.best) > 0 {
			s.opts.warmPoints = imp.best
			s.design = s.makeDesign()
		}
	}
	o, info := s.opts, s.info
	spaceJSON, err := json.Marshal(info.Params)
	if err != nil {
		return fmt.Errorf("encode space: %w", err)
	}
	o.DB = &Storage{s: db}
	settings, err := encodeSettings(o, info)
	if err != nil {
		return fmt.Errorf("encode settings: %w", err)
	}
	row := &store.Study{Name: o.Name, Objective: info.Name, Acquisition: o.Acquisition, Seed: o.Seed,
		Space: spaceJSON, Settings: settings}
	if db.MigrationPending() {
		// Every other input is checked: upgrade a database opened with
		// store.Options.DeferMigration only once the name is known to be
		// free too. CreateStudy checks the name again, atomically.
		if _, err := db.Study(ctx, o.Name); err == nil {
			return fmt.Errorf("create study: study %q %w in %s", o.Name, store.ErrExists, db.Path())
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := db.Migrate(ctx); err != nil {
			return err
		}
	}
	if err := db.CreateStudy(ctx, row); err != nil {
		return err
	}
	s.db, s.id, s.opts.DB = db, row.ID, &Storage{s: db}
	if err := s.takeLease(ctx); err != nil {
		return err
	}
	if imp != nil {
		s.logWarmStart(imp)
		return s.storeImported(ctx, imp)
	}
	return nil
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
// Suggester, Grace, OnIteration, OnTrial, Logger), plus Iters when
// positive (a new iteration budget, stored) and Parallel when positive. A database opened
// with store.Options.DeferMigration is migrated once the study has been
// read and checked.
func OpenStudy(ctx context.Context, storage *Storage, name string, o Options) (*Study, error) {
	if err := checkStorage(storage); err != nil {
		return nil, err
	}
	r, err := openStudy(ctx, storage.store(), name, o)
	return r, publicErr(err)
}

// openStudy is OpenStudy on the store.
func openStudy(ctx context.Context, db store.Storage, name string, o Options) (*Study, error) {
	row, st, err := loadSettings(ctx, db, name)
	if err != nil {
		return nil, err
	}
	opts := st.Options
	opts.Name, opts.DB, opts.Seed = name, &Storage{s: db}, row.Seed
	opts.Proposer, opts.Suggester, opts.OnIteration, opts.OnTrial, opts.Logger = o.Proposer, o.Suggester, o.OnIteration, o.OnTrial, o.Logger
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
	space, err := infoSpace(st.Info) // stored by a version with other bounds, maybe
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	pins, err := space.pins(opts.Fixed)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	pruner, err := opts.Pruning.pruner(st.Info)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	prop, mf, err := opts.studyProposer(st.Info, space)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	s := &Study{
		name: name, info: st.Info, space: space, opts: opts, seed: row.Seed, proposer: prop, pruner: pruner, mf: mf,
		db: db, id: row.ID, iters: map[int]*iterInfo{},
		refine: refines(opts.Recommend, false),
		log:    opts.Logger.With().Str("study", name).Logger(),
		pins:   pins,
	}
	s.design = s.makeDesign()
	// Refuse a budget below what has run before the lease, whose taking
	// writes to the database.
	if err := checkStoredBudget(ctx, db, row.ID, opts); err != nil {
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
	if err := s.loadTrials(ctx, db, row.ID); err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	its, err := db.Iterations(ctx, row.ID)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	carried, err := s.restoreIterations(its)
	if err != nil {
		return nil, err
	}
	if c, ok := prop.(acq.Carrier); ok && carried != nil {
		if err := c.RestoreState(carried); err != nil {
			return nil, fmt.Errorf("study %q: %w", name, err)
		}
	}
	s.carried = carried
	if err := s.importMissing(ctx, db); err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	if changed {
		settings, err := encodeSettings(opts, st.Info)
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

// Name returns the study's name.
func (s *Study) Name() string { return s.name }

// Info returns the objective's description the study was created with.
func (s *Study) Info() sdk.Info { return s.info }

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

// Done reports whether the study has issued its whole budget (the initial
// design and Options.Iters × Options.Batch evaluations) and has nothing in
// flight.
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
	_, more := s.nextBatchLocked()
	return !more && len(s.inFlightLocked()) == 0
}

// evaluationBudget is the one budget rule of Run and of workers: a study
// with an initial design of design points makes design + iters × batch
// evaluations (with AutoBatch, batch is the largest batch, so smaller
// batches make more iterations).
func evaluationBudget(design, iters, batch int) int { return design + iters*batch }

// nextBatchLocked returns the q to Ask for next under the study's budget,
// Init + Iters × Batch evaluations (the one budget rule, Run's and the
// workers'): 0 (all of it) while the initial design has points left, else
// Batch or what the budget has left if fewer; more is false when the
// budget is issued. Enqueued and attached trials do not count.
func (s *Study) nextBatchLocked() (q int, more bool) {
	design := s.designIssued()
	if design < len(s.design) {
		return 0, true
	}
	issued := len(s.design)
	for _, t := range s.trials {
		if t.Iteration >= 1 {
			issued++
		}
	}
	left := evaluationBudget(len(s.design), s.opts.Iters, s.opts.Batch) - issued
	if left <= 0 {
		return 0, false
	}
	return min(left, s.opts.Batch), true
}

// counts returns the numbers of complete, failed and pruned trials.
func (s *Study) counts() (complete, failed, pruned int) {
	for _, t := range s.trials {
		switch t.Status {
		case Complete:
			complete++
		case Failed:
			failed++
		case Pruned:
			pruned++
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
