package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/internal/fielddiff"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// The three entry points of a command-line front end: Start (a new
// study), Resume (a stored one) and Join (a stored one, as one of its
// workers). Each takes options already parsed, decides the defaults and
// the mode (one process, or a worker of a study shared on PostgreSQL),
// checks every input before anything is written, and sends the objective
// its run parameters once.

// InputError is a refusal caused by the caller's input: an option, a run
// parameter, a study name, or a stored study's state that refuses the
// command. tesbo-host reports it in one line and exits with status 2.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputError wraps a non-nil err in an *InputError.
func inputError(err error) error {
	if err == nil {
		return nil
	}
	return &InputError{Err: err}
}

// inputUnlessCancelled is inputError(err) unless ctx was cancelled: a
// step cut short by the caller (a signal) failed for no fault of the
// input.
func inputUnlessCancelled(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return inputError(err)
}

// StudyExistsError is Start's refusal of a study name a database not
// shared by workers already holds: continue it with Resume instead.
type StudyExistsError struct{ Name string }

func (e *StudyExistsError) Error() string {
	return fmt.Sprintf("study %q already exists", e.Name)
}

// ParallelError is Resume's refusal of more concurrent evaluations than
// MaxParallel for a worker of a shared study.
type ParallelError struct{ Parallel int }

func (e *ParallelError) Error() string {
	return fmt.Sprintf("%d concurrent evaluations exceed the limit of %d (MaxParallel)", e.Parallel, MaxParallel)
}

// Loader loads the objective of a stored study (settings st, objective
// info) and, for an acquisition that is not built in, its proposer or
// suggester. Resume and Join call it only once the study is known to be
// one this process may continue, so a refused command starts no plugin.
type Loader func(ctx context.Context, st Options, info sdk.Info) (Loaded, error)

// Loaded is what a Loader loaded.
type Loaded struct {
	Objective sdk.Objective
	Proposer  acq.Proposer  // an acquisition plugin (Options.Proposer)
	Suggester sdk.Suggester // a suggester plugin (Options.Suggester)
}

// Outcome is what Start, Resume and Join did.
type Outcome struct {
	// Name is the study's name.
	Name string
	// Study is the study this process ran alone, or with Summarize the
	// summary view of a study its workers share.
	Study *Study
	// Result is the Run's result, or with Summarize the shared study's
	// summary (Elapsed: this worker's time).
	Result *Result
	// Worker is set when this process worked as one of the study's
	// workers.
	Worker *WorkerResult
	// Complete: Resume found the study already complete and ran nothing
	// (Result, with Summarize, summarizes it).
	Complete bool
}

// Launch is a new study as Start makes it.
type Launch struct {
	// Options are the study's; Init 0 with InitFromObjective takes the
	// objective's declared design, Name "" a DefaultStudyName made from
	// ObjectiveName.
	Options
	// Objective is evaluated; Start sends it Options.Params, the noise
	// variance and the seed (sdk.Configurable), once.
	Objective sdk.Objective
	// ObjectiveName is the objective's name as the caller loaded it (it
	// may differ from its Info's); "" means the Info's.
	ObjectiveName string
	// OpenDB opens the study database. Start calls it once every input is
	// checked, so that a refused study creates no database file.
	OpenDB func(ctx context.Context) (*Storage, error)
	// Shared: the database is shared by workers (PostgreSQL). The study
	// is then run by this process as one of its workers (Worker), and a
	// study of that name that exists already is joined (loaded by Load)
	// rather than refused.
	Shared bool
	// Worker configures this process as a worker (Shared); a zero
	// Parallel means Options.Parallel.
	Worker WorkerOptions
	// Load loads a stored study's objective when Start joins a shared
	// study of that name that exists already.
	Load Loader
	// OnStudy is called with the study before this process runs it alone
	// (to attach progress output).
	OnStudy func(*Study)
	// Summarize: as a worker, end with the summary of the shared study.
	Summarize bool
	// Fix pins parameters given as text, NAME → VALUE (tesbo-host run
	// --fix): a number in native units, a Categorical's choice by name.
	// Start resolves them against the objective's Info and adds them to
	// Options.Fixed.
	Fix map[string]string
}

// Start makes a new study and runs it: alone, or on a shared database as
// one of its workers. The options are normalized and validated once, the
// objective configured once, and the database opened only when all of
// them are accepted.
func Start(ctx context.Context, l Launch) (*Outcome, error) {
	o := l.Options.Normalized()
	name := l.ObjectiveName
	if err := configure(ctx, l.Objective, name, o); err != nil {
		return nil, inputUnlessCancelled(ctx, err)
	}
	if rs, ok := l.Objective.(ReportsSupporter); ok && o.MultiFidelity.Enabled && !rs.SupportsReports() {
		// Its trials would run in full whatever step they were proposed
		// for, while the acquisition counted them at that step's cost.
		return nil, inputError(fmt.Errorf("objective %s reports no intermediate values (sdk.Report), which multi-fidelity needs to stop a trial at its step: drop --multi-fidelity or report from the objective", name))
	}
	if rs, ok := l.Objective.(ReportsSupporter); ok && o.Pruning.Rule != "" && !rs.SupportsReports() {
		o.Logger.Warn().Str("objective", name).Str("pruner", o.Pruning.Rule).Msg("the objective reports no intermediate values (sdk.Report): the pruner will stop no evaluation")
	}
	// Configure first: the parameters may change the space and f*.
	info, err := objectiveInfo(ctx, l.Objective)
	if err != nil {
		return nil, fmt.Errorf("objective %s: %w", name, err)
	}
	if name == "" {
		name = info.Name
	}
	if o.Name == "" {
		o.Name = DefaultStudyName(name, time.Now())
	}
	if o.Fixed, err = fixedFromText(info.Params, l.Fix, o.Fixed); err != nil {
		return nil, inputError(err)
	}
	if l.Shared && o.Pruning.Rule != "" && o.Pruning.Model == "" {
		o.Pruning.Model = PruneModelLast // workers need the stand-in
	}
	s, err := newStudy(info, o)
	if err != nil {
		return nil, inputError(err)
	}
	db, err := l.OpenDB(ctx)
	if err != nil {
		return nil, err
	}
	if l.Shared {
		if err := CheckAsync(o.Acquisition); err != nil {
			return nil, inputError(err)
		}
		if o.MultiFidelity.Enabled {
			return nil, inputError(fmt.Errorf("a multi-fidelity study runs in one process: use a SQLite database, not a shared PostgreSQL one"))
		}
		if o.Pruning.Model == PruneModelCurve {
			return nil, inputError(fmt.Errorf("the pruner's curve model runs in one process: use a SQLite database, not a shared PostgreSQL one, or the stand-in (--pruner-model last)"))
		}
	}
	j := JoinOptions{Worker: l.Worker, Load: l.Load, Summarize: l.Summarize}
	if j.Worker.Parallel == 0 {
		j.Worker.Parallel = o.Parallel
	}
	if _, err := db.store().Study(ctx, o.Name); err == nil {
		if l.Shared {
			return joinExisting(ctx, db, s, j)
		}
		return nil, &StudyExistsError{Name: o.Name}
	}
	if err := s.create(ctx, db.store()); err != nil {
		if l.Shared && errors.Is(err, store.ErrExists) {
			return joinExisting(ctx, db, s, j) // another run created it first
		}
		return nil, inputUnlessCancelled(ctx, err)
	}
	if l.Shared {
		s.Close()
		return join(ctx, db, o.Name, j, l.Objective, true)
	}
	defer s.Close() // releases the study's lease
	s.configured = true
	if l.OnStudy != nil {
		l.OnStudy(s)
	}
	res, err := s.Run(ctx, l.Objective)
	return &Outcome{Name: s.Name(), Study: s, Result: res}, err
}

// joinExisting joins the shared study of s's name, which exists already,
// when it is the study s would have created (sameStudy).
func joinExisting(ctx context.Context, db *Storage, s *Study, j JoinOptions) (*Outcome, error) {
	if err := sameStudy(ctx, db.store(), s); err != nil {
		return nil, inputError(err)
	}
	return Join(ctx, db, s.opts.Name, j)
}

// sameStudy checks that the stored study of s's name is the one s
// describes: the same seed, objective and settings, but for the
// per-process evaluation slots (Parallel). Start joins a shared study of
// that name only then: its objective and options would otherwise be
// ignored, the stored study's evaluated instead.
func sameStudy(ctx context.Context, db store.Storage, s *Study) error {
	row, st, err := loadSettings(ctx, db, s.opts.Name)
	if err != nil {
		return err
	}
	var diff []string
	if row.Seed != s.opts.Seed {
		diff = append(diff, fmt.Sprintf("seed %d there, %d here", row.Seed, s.opts.Seed))
	}
	there, here := recordOf(st.Options, st.Info), recordOf(s.opts, s.info)
	there.Parallel, here.Parallel = 0, 0
	there.WarmPoints, here.WarmPoints = nil, nil // derived when the study is made
	diff = append(diff, recordDiff(there, here)...)
	if len(diff) == 0 {
		return nil
	}
	return fmt.Errorf("study %q exists in this database with other settings (%s): join it as it is with 'tesbo-host worker --study %s', or give another --study", s.opts.Name, strings.Join(diff, "; "), s.opts.Name)
}

// recordDiff names the settings in which two records differ, with both
// values where they are short.
func recordDiff(there, here settingsRecord) []string {
	if there.Info.Name != here.Info.Name {
		return []string{fmt.Sprintf("objective %s there, %s here", there.Info.Name, here.Info.Name)}
	}
	var diff []string
	for _, f := range fielddiff.Fields(there, here) {
		switch {
		case f.Key == "info":
			diff = append(diff, "the objective's parameters or outputs")
		case f.Short():
			diff = append(diff, fmt.Sprintf("%s %s there, %s here", f.Key, f.A, f.B))
		default:
			diff = append(diff, f.Key)
		}
	}
	return diff
}

// ResumeOptions configure Resume.
type ResumeOptions struct {
	// Iters, when positive, is the study's new total of BO iterations;
	// Parallel, when positive, this process's concurrent evaluations.
	Iters, Parallel int
	// Shared: the database is shared by workers (PostgreSQL): the study
	// is always continued as one of its workers.
	Shared bool
	// Worker configures this process as a worker (Parallel is set from
	// Parallel or the study's); its Logger is the study's logger too.
	Worker WorkerOptions
	// Load loads the study's objective and custom acquisition.
	Load Loader
	// OnStudy is called with the study before this process runs it alone.
	OnStudy func(*Study)
	// Summarize: end with the study's summary (Outcome.Result).
	Summarize bool
}

// Resume continues the stored study name: alone (OpenStudy and Run), or,
// when workers work on it or the database is shared, as one of its
// workers. A study another process runs is refused before its objective
// is loaded; a study already complete is reported (Outcome.Complete)
// without running anything.
func Resume(ctx context.Context, db *Storage, name string, r ResumeOptions) (*Outcome, error) {
	st, info, err := StoredSettings(ctx, db, name)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, inputError(err)
		}
		return nil, inputError(fmt.Errorf("read study %q: %w", name, err))
	}
	live, err := liveWorkers(ctx, db.store(), name)
	if err != nil {
		return nil, err
	}
	if live || r.Shared {
		// This worker's slots: Parallel, else the study's own.
		w := r.Worker
		w.Parallel = r.Parallel
		if w.Parallel == 0 {
			w.Parallel = max(st.Parallel, 1)
		}
		if w.Parallel > MaxParallel {
			return nil, &ParallelError{Parallel: w.Parallel}
		}
		if r.Iters > 0 {
			// The budget is global: raise it for every worker.
			if err := setWorkerBudget(ctx, db.store(), name, r.Iters); err != nil {
				return nil, inputError(err)
			}
		}
		return Join(ctx, db, name, JoinOptions{Worker: w, Load: r.Load, Summarize: r.Summarize})
	}
	return resumeAlone(ctx, db, name, st, info, r)
}

// resumeAlone continues a study this process runs on its own.
func resumeAlone(ctx context.Context, db *Storage, name string, st Options, info sdk.Info, r ResumeOptions) (*Outcome, error) {
	// Refuse a study another process is running before starting plugins
	// (OpenStudy takes the lease, and decides again, atomically).
	if row, err := db.store().Study(ctx, name); err == nil {
		if err := publicErr(db.store().CheckLease(ctx, row.ID)); err != nil {
			return nil, inputError(err)
		}
	}
	if r.Load == nil {
		return nil, errors.New("resume: ResumeOptions.Load is nil: Resume needs a Loader for the study's objective")
	}
	ld, err := r.Load(ctx, st, info)
	if err != nil {
		return nil, err
	}
	obj := ld.Objective
	s, err := OpenStudy(ctx, db, name, Options{Proposer: ld.Proposer, Suggester: ld.Suggester, Iters: r.Iters, Parallel: r.Parallel, Logger: r.Worker.Logger})
	var be *BudgetError
	if errors.As(err, &be) {
		return nil, be
	}
	if err != nil {
		return nil, inputError(err)
	}
	defer s.Close() // releases the study's lease
	// A study whose last record is missing is not complete: Run makes it.
	if s.Done() && s.Recorded() {
		out := &Outcome{Name: name, Study: s, Complete: true}
		if r.Summarize {
			out.Result, err = s.Run(ctx, obj) // no work: builds the summary
		}
		return out, err
	}
	s.log.Info().Int("trials", len(s.Trials())).Int("in_flight", len(s.InFlight())).Msg("resuming")
	if r.OnStudy != nil {
		r.OnStudy(s)
	}
	res, err := s.Run(ctx, obj)
	return &Outcome{Name: name, Study: s, Result: res}, err
}

// JoinOptions configure Join.
type JoinOptions struct {
	// Worker configures this process as a worker.
	Worker WorkerOptions
	// Load loads the study's objective.
	Load Loader
	// Summarize: end with the summary of the shared study
	// (Outcome.Study and Outcome.Result).
	Summarize bool
}

// Join works on the stored study name as one of its workers (RunWorker)
// until it is complete or ctx ends. A study that cannot run in worker
// mode (its acquisition, or a single process ran it: *RunAloneError) is
// refused before its objective is loaded.
func Join(ctx context.Context, db *Storage, name string, j JoinOptions) (*Outcome, error) {
	st, info, err := StoredSettings(ctx, db, name)
	if err != nil {
		return nil, inputError(err)
	}
	if err := CheckAsync(st.Acquisition); err != nil {
		return nil, inputError(err)
	}
	if err := publicErr(checkRunAlone(ctx, db.store(), name)); err != nil {
		var alone *RunAloneError
		if row, rerr := db.store().Study(ctx, name); errors.As(err, &alone) && rerr == nil {
			// Running now: say that (wait, then resume), not "resume",
			// which would be refused while it runs.
			if herr := heldBySingle(ctx, db.store(), row.ID); AsLeaseHeld(herr) != nil {
				return nil, herr
			}
		}
		return nil, err
	}
	if j.Load == nil {
		return nil, errors.New("join: JoinOptions.Load is nil: Join needs a Loader for the study's objective")
	}
	ld, err := j.Load(ctx, st, info)
	if err != nil {
		return nil, err
	}
	return join(ctx, db, name, j, ld.Objective, false)
}

// join runs this process as a worker of study name with obj, which
// Start may already have configured (configured: not again).
func join(ctx context.Context, db *Storage, name string, j JoinOptions, obj sdk.Objective, configured bool) (*Outcome, error) {
	j.Worker.Logger.Info().Str("study", name).Int("parallel", j.Worker.Parallel).Msg("joining the study as a worker")
	start := time.Now()
	res, err := runWorker(ctx, db.store(), name, obj, j.Worker, configured)
	if res == nil {
		res = &WorkerResult{}
	}
	out := &Outcome{Name: name, Worker: res}
	if err != nil || !j.Summarize {
		return out, err
	}
	if out.Study, out.Result, err = workerSummary(ctx, db.store(), name, obj); err != nil {
		return out, fmt.Errorf("summarize study %q: %w", name, err)
	}
	out.Result.Elapsed = time.Since(start)
	return out, nil
}
