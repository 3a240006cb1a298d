package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	if prop == nil && o.Suggester == nil {
		if prop, err = acq.Lookup(o.Acquisition, o.AcqOptions); err != nil {
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
// Suggester, Grace, OnIteration, OnTrial, Logger), plus Iters when
// positive (a new iteration budget, stored) and Parallel when positive. A database opened
// with store.Options.DeferMigration is migrated once the study has been
// read and checked.
func OpenStudy(ctx context.Context, db *store.DB, name string, o Options) (*Study, error) {
	row, st, err := loadSettings(ctx, db, name)
	if err != nil {
		return nil, err
	}
	opts := st.Options
	opts.Name, opts.DB, opts.Seed = name, db, row.Seed
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
	space, err := NewSpace(st.Info.Params)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	prop := opts.Proposer
	if prop == nil && opts.Suggester == nil {
		if prop, err = acq.Lookup(opts.Acquisition, opts.AcqOptions); err != nil {
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
