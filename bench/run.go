package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// Output file names in Suite.Out.
const (
	DBFile      = "studies.db"
	RunsFile    = "runs.csv"
	SummaryFile = "summary.md"
	// comparisonFile compares the methods under the user's rule (suites of
	// more than one acquisition).
	comparisonFile = "comparison.md"
	HistoryFile    = "bench.json"
)

// status is what happened to a run in one invocation of Run.
type status string

// Run statuses.
const (
	StatusDone        status = "done"        // ran (or resumed) to completion now
	StatusSkipped     status = "skipped"     // already complete in the database
	StatusFailed      status = "failed"      // stopped by an error (recorded, not fatal)
	StatusInterrupted status = "interrupted" // the context ended first; resumable
	StatusNotStarted  status = "not started" // the context ended before it started
)

// row is one BO iteration of a run: the host's Record reduced to what the
// outputs use.
type row struct {
	Iter   int
	Evals  int
	Regret *float64 // f* − f(x̄), noise-free; nil when f* is unknown
	// BestEvalRegret is the user's rule: the noise-free regret of the
	// completed trial with the best observed value so far (nil when f* or
	// a noise-free evaluation is unavailable).
	BestEvalRegret *float64
	// BestTrueRegret is the oracle rule: the smallest noise-free regret
	// among the completed trials so far — what BoTorch's benchmark runner
	// reports as its best value, so the two sides can be compared on the
	// same footing. It equals BestEvalRegret on noise-free objectives.
	BestTrueRegret *float64
	BestValue      *float64
	FitS           float64
	ProposeS       float64
	EvalS          float64
	// Fallback is true when the iteration's batch came from the host's
	// space-filling fallback because fitting or proposing failed.
	Fallback bool
}

// runResult is a run's outcome and its iterations (at most Suite.Iters,
// from the database, so resumed and skipped runs are complete too).
type runResult struct {
	Spec    runSpec
	Status  status
	Err     string
	Rows    []row
	Elapsed time.Duration // wall time spent on it in this invocation
}

// Report is the outcome of Run.
type Report struct {
	Runs []runResult
	// Wall is this invocation's wall time; TotalWall adds the earlier
	// invocations on the same output directory.
	Wall, TotalWall time.Duration
	Files           []string // outputs written
}

// Count returns the number of runs with status st.
func (r *Report) Count(st status) int {
	n := 0
	for _, rr := range r.Runs {
		if rr.Status == st {
			n++
		}
	}
	return n
}

// InvalidError reports a suite that cannot run as given (bad names, values
// or parameters); nothing was run or written.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// Run runs every run of the suite that is not yet complete in
// Suite.Out/studies.db, Suite.Jobs at a time, then writes runs.csv,
// summary.md and the figures from everything the database holds for the
// suite. A failed run is logged and reported, not fatal. When ctx ends, runs
// in progress stop (resumable by calling Run again), the outputs are written
// for what is complete, and the error wraps the context's cause.
func Run(ctx context.Context, s Suite) (*Report, error) {
	start := time.Now()
	params, unlock, err := s.prepare(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	db, err := store.Open(filepath.Join(s.Out, DBFile), store.Options{Create: true, BusyTimeout: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("open study database: %w", err)
	}
	defer db.Close()
	r := &runner{s: &s, db: db, params: params, locks: map[string]*sync.Mutex{}}
	specs := s.specs()
	if err := r.checkStored(ctx, specs); err != nil {
		return nil, err
	}

	// The invocation is recorded at once and updated after every run, so
	// even a killed bench leaves its wall time (up to its last finished run)
	// in the directory's history.
	hlog, err := openHistory(s.Out, invocation{Started: start.UTC(), Command: s.Command, Interrupted: true})
	if err != nil {
		return nil, err
	}
	rep := &Report{Runs: make([]runResult, len(specs))}
	var done, failed atomic.Int64
	var next, finished atomic.Int64
	var wg sync.WaitGroup
	for range min(s.jobs(), len(specs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(specs) {
					return
				}
				if ctx.Err() != nil {
					rep.Runs[i] = runResult{Spec: specs[i], Status: StatusNotStarted}
					continue
				}
				rep.Runs[i] = r.run(ctx, specs[i])
				switch rep.Runs[i].Status {
				case StatusDone:
					done.Add(1)
				case StatusFailed:
					failed.Add(1)
				}
				if err := hlog.update(func(inv *invocation) {
					inv.WallS, inv.Finished, inv.Failed = time.Since(start).Seconds(), int(done.Load()), int(failed.Load())
				}); err != nil {
					s.Logger.Warn().Err(err).Msg("could not update the bench history")
				}
				r.progress(rep.Runs[i], int(finished.Add(1)), len(specs))
			}
		}()
	}
	wg.Wait()
	// Runs never started still have whatever an earlier invocation stored.
	for i := range rep.Runs {
		if rep.Runs[i].Status == StatusNotStarted {
			rep.Runs[i].Rows, _ = r.rows(context.WithoutCancel(ctx), specs[i])
		}
	}
	rep.Wall = time.Since(start)
	err = hlog.update(func(inv *invocation) {
		inv.WallS, inv.Finished, inv.Failed = rep.Wall.Seconds(), rep.Count(StatusDone), rep.Count(StatusFailed)
		inv.Interrupted = ctx.Err() != nil
	})
	if err != nil {
		return rep, err
	}
	hist := hlog.snapshot()
	rep.TotalWall = hist.total()
	files, err := write(s.Out, &s, rep.Runs, hist)
	rep.Files = files
	if err != nil {
		return rep, err
	}
	if ctx.Err() != nil {
		return rep, fmt.Errorf("bench interrupted (%d of %d runs complete; run the same command again to continue): %w",
			rep.Count(StatusDone)+rep.Count(StatusSkipped), len(specs), context.Cause(ctx))
	}
	return rep, nil
}

// runner holds what the runs share.
type runner struct {
	s      *Suite
	db     *store.DB
	params map[string]map[string]string // problem label → objective parameters

	mu    sync.Mutex
	locks map[string]*sync.Mutex // exclusive objectives
}

// lockFile is the output directory's lock (lockOut).
const lockFile = ".bench.lock"

// prepare is what every suite command does before running: it validates s
// and resolves its problems' parameters (an InvalidError when either
// fails), creates the output directory and takes its lock (an
// InvalidError when another bench holds it), which unlock releases.
func (s *Suite) prepare(ctx context.Context) (params map[string]map[string]string, unlock func(), err error) {
	if err := s.validate(); err != nil {
		return nil, nil, &InvalidError{err}
	}
	params, err = s.resolveParams(ctx)
	if err != nil {
		return nil, nil, &InvalidError{err}
	}
	if err := os.MkdirAll(s.Out, 0o755); err != nil {
		return nil, nil, fmt.Errorf("output directory: %w", err)
	}
	if unlock, err = lockOut(s.Out); err != nil {
		return nil, nil, &InvalidError{err}
	}
	return params, unlock, nil
}

// studyOptions are the host options of one run (without DB and callbacks).
func (s *Suite) studyOptions(spec runSpec, params map[string]string) host.Options {
	o := host.Options{
		Name:        spec.studyName(),
		Acquisition: spec.Acquisition,
		AcqOptions:  s.acqOptions(),
		Batch:       spec.Batch,
		Iters:       s.itersOf(spec.Problem),
		Seed:        spec.Seed,
		NoiseVar:    max(s.NoiseVar, 0),
		ZeroNoise:   s.NoiseVar < 0,
		FixNoise:    s.FixNoise,
		Params:      maps.Clone(params),
		Kernel:      s.Kernel,
		GPPrior:     s.GPPrior,
		Recommend:   s.Recommend,
		Model:       s.Model,
		LocalPoints: s.LocalPoints,
		EvalTimeout: s.EvalTimeout,
	}
	if v, ok := spec.Problem.Params[KeyNoiseVar]; ok {
		nv, _ := parseNoiseVar(v) // checked by ParseProblem
		o.NoiseVar, o.ZeroNoise = nv, nv == 0
	}
	if n := s.initOf(spec.Problem, spec.Batch); n > 0 {
		o.Init = n
	} else {
		o.NoInit = true
	}
	if len(o.Params) == 0 {
		o.Params = nil
	}
	return o
}

// studyLogger is the logger handed to the studies: one level quieter than
// the suite's, so per-iteration messages do not drown the progress lines.
func (s *Suite) studyLogger() zerolog.Logger {
	if s.Logger.GetLevel() <= zerolog.DebugLevel {
		return s.Logger
	}
	return s.Logger.Level(max(s.Logger.GetLevel(), zerolog.WarnLevel))
}

// run runs (or resumes, or skips) one study; it never returns an error, it
// records it.
func (r *runner) run(ctx context.Context, spec runSpec) (res runResult) {
	t0 := time.Now()
	res.Spec = spec
	defer func() {
		res.Elapsed = time.Since(t0)
		if p := recover(); p != nil {
			res.Status, res.Err = StatusFailed, fmt.Sprintf("panic: %v", p)
		}
		rows, err := r.rows(context.WithoutCancel(ctx), spec)
		if err == nil {
			res.Rows = rows
		} else if res.Err == "" && !errors.Is(err, store.ErrNotFound) {
			res.Status, res.Err = StatusFailed, err.Error()
		}
	}()
	err := r.runStudy(ctx, spec, &res)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		res.Status = StatusInterrupted
	default:
		res.Status, res.Err = StatusFailed, err.Error()
	}
	return res
}

func (r *runner) runStudy(ctx context.Context, spec runSpec, res *runResult) error {
	name := spec.studyName()
	o := r.s.studyOptions(spec, r.params[spec.Problem.Label()])
	o.Logger = r.s.studyLogger()
	proposer, err := acq.Lookup(spec.Acquisition, o.AcqOptions)
	if err != nil {
		return err
	}
	var study *host.Study
	_, err = r.db.Study(ctx, name)
	switch {
	case err == nil:
		// Its settings are the suite's: Run checked every stored study
		// (checkStored) under the output directory's lock.
		study, err = host.OpenStudy(ctx, hostStorage(r.db), name, host.Options{Iters: o.Iters, Proposer: proposer, Logger: o.Logger})
		var beyond *host.BudgetError
		if errors.As(err, &beyond) {
			// Stored with a longer budget: its first Iters iterations are
			// this suite's run (rows reads no more than those).
			res.Status = StatusSkipped
			return nil
		}
		if err != nil {
			return fmt.Errorf("reopen study: %w", err)
		}
		defer study.Close() // releases the study's lease
		if study.Done() {
			res.Status = StatusSkipped
			return nil
		}
	case errors.Is(err, store.ErrNotFound):
	default:
		return fmt.Errorf("study database: %w", err)
	}

	obj, exclusive, err := r.s.opener()(ctx, spec.Problem.Name)
	if err != nil {
		return err
	}
	if exclusive {
		l := r.lock(spec.Problem.Name)
		l.Lock()
		defer l.Unlock()
	}
	if study == nil {
		// Configure first: Info depends on the parameters (dimension, the
		// log10P data and its f*).
		if err := host.ConfigureObjective(ctx, obj, spec.Problem.Name, o); err != nil {
			return err
		}
		info, err := obj.Info(ctx)
		if err != nil {
			return fmt.Errorf("objective info: %w", err)
		}
		o.DB = hostStorage(r.db)
		if study, err = host.NewStudy(ctx, info, o); err != nil {
			return fmt.Errorf("new study: %w", err)
		}
		defer study.Close()
	}
	if _, err := study.Run(ctx, obj); err != nil {
		return err
	}
	res.Status = StatusDone
	return nil
}

func (r *runner) lock(name string) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.locks[name] == nil {
		r.locks[name] = &sync.Mutex{}
	}
	return r.locks[name]
}

// rows reads a study's iteration records (at most Suite.Iters).
func (r *runner) rows(ctx context.Context, spec runSpec) ([]row, error) {
	name := spec.studyName()
	st, err := r.db.Study(ctx, name)
	if err != nil {
		return nil, err
	}
	its, err := r.db.Iterations(ctx, st.ID)
	if err != nil {
		return nil, fmt.Errorf("study %s: %w", name, err)
	}
	var rows []row
	var judged []*multiJudged
	for _, it := range its {
		if it.Iteration < 1 || it.Iteration > r.s.itersOf(spec.Problem) || len(it.Record) == 0 || string(it.Record) == "null" {
			continue
		}
		var rec host.Record
		if err := json.Unmarshal(it.Record, &rec); err != nil {
			return nil, fmt.Errorf("study %s iteration %d: bad record: %w", name, it.Iteration, err)
		}
		fallback, err := host.FallbackReason(it.Model)
		if err != nil {
			return nil, fmt.Errorf("study %s iteration %d: %w", name, it.Iteration, err)
		}
		rows = append(rows, row{Iter: rec.Iter, Evals: rec.Evals, Regret: rec.Regret, BestValue: rec.BestValue,
			FitS: rec.FitS, ProposeS: rec.ProposeS, EvalS: rec.EvalS, Fallback: fallback != ""})
		judged = append(judged, judgedOf(rec.MultiRecord))
	}
	if len(judged) > 0 && judged[0] != nil {
		if err := r.multiEvaluated(ctx, spec, st.ID, rows, judged); err != nil {
			return nil, fmt.Errorf("study %s: %w", name, err)
		}
		return rows, nil
	}
	if err := r.bestEvaluated(ctx, spec, st.ID, rows); err != nil {
		return nil, fmt.Errorf("study %s: %w", name, err)
	}
	return rows, nil
}

// noiseFreeSource is an objective's noise-free evaluation with its f*.
type noiseFreeSource struct {
	nf     sdk.NoiseFree
	info   sdk.Info // with Optimum set
	shared bool     // a shared plugin instance, held under its runs' lock
	// release lets the runs have a shared instance back (no-op otherwise).
	release func()
}

// noiseFree opens an instance of spec's objective, configured with params
// as its runs are, for its noise-free values; nil when it has none to give
// (no sdk.NoiseFree, no declared f*). A fresh instance serves in-process
// objectives. An exclusive one (a shared plugin instance) is used only
// when lock is given, under the lock its runs hold, since configuring it
// here would change a running study's configuration; the caller releases
// it. Without lock it gives none.
func (s *Suite) noiseFree(ctx context.Context, spec runSpec, params map[string]string, lock func(string) *sync.Mutex) (*noiseFreeSource, error) {
	obj, exclusive, err := s.opener()(ctx, spec.Problem.Name)
	if err != nil || exclusive && lock == nil {
		return nil, nil
	}
	nf, ok := host.NoiseFreeOf(obj)
	if !ok {
		return nil, nil
	}
	src := &noiseFreeSource{nf: nf, shared: exclusive, release: func() {}}
	if exclusive {
		l := lock(spec.Problem.Name)
		l.Lock()
		src.release = l.Unlock
	}
	if err := host.ConfigureObjective(ctx, obj, spec.Problem.Name, s.studyOptions(spec, params)); err != nil {
		src.release()
		return nil, err
	}
	src.info, err = obj.Info(ctx)
	if err != nil || src.info.Optimum == nil {
		src.release()
		return nil, nil
	}
	return src, nil
}

// bestEvaluated fills Row.BestEvalRegret: for each iteration, the completed
// trial with the best observed value among those issued up to it, and its
// noise-free regret; and Row.BestTrueRegret, the smallest noise-free regret
// among those trials. Objectives without a declared f* or a noise-free
// evaluation are left without, and so are a plugin's runs when its
// noise-free evaluation fails (logged: the plugin may have died after the
// run, whose rows stand).
func (r *runner) bestEvaluated(ctx context.Context, spec runSpec, studyID int64, rows []row) error {
	if len(rows) == 0 {
		return nil
	}
	src, err := r.s.noiseFree(ctx, spec, r.params[spec.Problem.Label()], r.lock)
	if err != nil || src == nil {
		return err
	}
	defer src.release()
	err = r.fillBestEvaluated(ctx, src.nf, src.info, studyID, rows)
	if err != nil && src.shared {
		r.s.Logger.Warn().Err(err).Str("problem", spec.Problem.Label()).Msg("no user's-rule regret for this run: the plugin's noise-free evaluation failed")
		for i := range rows {
			rows[i].BestEvalRegret, rows[i].BestTrueRegret = nil, nil
		}
		return nil
	}
	return err
}

// fillBestEvaluated is bestEvaluated's work, on the noise-free evaluation
// nf of an objective with f* (info.Optimum).
func (r *runner) fillBestEvaluated(ctx context.Context, nf sdk.NoiseFree, info sdk.Info, studyID int64, rows []row) error {
	trials, err := r.db.Trials(ctx, studyID)
	if err != nil {
		return err
	}
	sign := 1.0
	if info.Minimize {
		sign = -1
	}
	best, k := -1, 0
	var oracle *float64
	for i := range rows {
		for ; k < len(trials) && trials[k].Iteration <= rows[i].Iter; k++ {
			t := trials[k]
			if t.Status != store.Complete {
				continue
			}
			f, err := nf.EvaluateNoiseFree(ctx, t.X)
			if err != nil {
				return fmt.Errorf("noise-free value of trial %d: %w", k, err)
			}
			rg := math.Min(sign*(*info.Optimum-f), math.MaxFloat64) // as the host's record: no +Inf in runs.csv
			if oracle == nil || rg < *oracle {
				oracle = new(rg)
			}
			if best < 0 || sign*t.Value > sign*trials[best].Value {
				best, rows[i].BestEvalRegret = k, new(rg)
			}
		}
		if best < 0 {
			continue
		}
		if rows[i].BestEvalRegret == nil {
			rows[i].BestEvalRegret = rows[i-1].BestEvalRegret
		}
		rows[i].BestTrueRegret = new(*oracle)
	}
	return nil
}

// progress logs one line per finished run.
func (r *runner) progress(res runResult, done, total int) {
	ev := r.s.Logger.Info()
	if res.Status == StatusFailed {
		ev = r.s.Logger.Error().Str("error", res.Err)
	}
	ev = ev.Str("progress", strconv.Itoa(done)+"/"+strconv.Itoa(total)).
		Str("problem", res.Spec.Problem.Label()).Str("acq", res.Spec.Acquisition).
		Int("batch", res.Spec.Batch).Int("seed", res.Spec.Index).Str("status", string(res.Status)).
		Int("iters", len(res.Rows)).Float64("elapsed_s", round3(res.Elapsed.Seconds()))
	if n := len(res.Rows); n > 0 {
		if rg := res.Rows[n-1].Regret; rg != nil {
			ev = ev.Float64("log10_regret", round3(log10Regret(*rg)))
		}
		props := make([]float64, n)
		for i, row := range res.Rows {
			props[i] = row.ProposeS
		}
		ev = ev.Float64("median_propose_s", round3(median(props)))
	}
	ev.Msg("run finished")
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
