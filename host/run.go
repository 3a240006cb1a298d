package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// Record is the per-iteration output record (the CLI's --json
// lines, one per BO iteration):
//
//	{"iter":3,"evals":8,"batch":[[0.1,0.9]],"values":[-1.2],"best_value":-0.4,
//	 "best_x":[0.12,0.88],"regret":0.0031,"fit_s":0.02,"propose_s":0.31,"eval_s":0.001,
//	 "best_observed":-0.7,"best_observed_x":[0.1,0.93]}
//
// Iter counts from 1 after the initial design; Evals is the number of
// completed evaluations so far; Batch holds the iteration's points in native
// units and Values their values (null for a failed evaluation); BestX and
// BestValue are the recommendation x̄ and the objective's value there
// (null only while nothing has completed), which can go down as well as up
// as the model learns; BestObserved and BestObservedX are the best value
// observed so far (the largest, or the smallest for a minimizing
// objective; it never gets worse) and where; Regret is f* − f(x̄) (for a
// minimizing objective f(x̄) − f*) with f evaluated without noise when the
// objective implements sdk.NoiseFree, null when f* is unknown; FitS and
// ProposeS time the GP fit and the acquisition, EvalS the batch's
// evaluation (first start to last finish).
// A space with Categorical parameters adds "choices", "best_choices" and
// "best_observed_choices" (see the fields).
type Record struct {
	Iter      int         `json:"iter"`
	Evals     int         `json:"evals"`
	Batch     [][]float64 `json:"batch"`
	Values    []*float64  `json:"values"`
	BestValue *float64    `json:"best_value"`
	BestX     []float64   `json:"best_x"`
	Regret    *float64    `json:"regret"`
	FitS      float64     `json:"fit_s"`
	ProposeS  float64     `json:"propose_s"`
	EvalS     float64     `json:"eval_s"`

	BestObserved  *float64  `json:"best_observed"`
	BestObservedX []float64 `json:"best_observed_x"`

	// Choices name the Categorical coordinates of Batch, BestX and
	// BestObservedX (parameter name → choice name; the coordinates
	// themselves are the choices' indices). Empty when the space has no
	// Categorical.
	Choices             []map[string]string `json:"choices,omitempty"`
	BestChoices         map[string]string   `json:"best_choices,omitempty"`
	BestObservedChoices map[string]string   `json:"best_observed_choices,omitempty"`
}

// ChoiceNames maps the Categorical parameters of params to the names of
// their choices at the native point x (nil when there are none).
func ChoiceNames(params []sdk.Param, x []float64) map[string]string {
	var m map[string]string
	for i, p := range params {
		if p.Kind == sdk.Categorical && i < len(x) {
			if m == nil {
				m = map[string]string{}
			}
			m[p.Name] = p.Format(x[i])
		}
	}
	return m
}

// nameChoices fills rec's Choices fields from its points.
func nameChoices(rec *Record, params []sdk.Param) {
	if ChoiceNames(params, make([]float64, len(params))) == nil {
		return
	}
	for _, x := range rec.Batch {
		rec.Choices = append(rec.Choices, ChoiceNames(params, x))
	}
	rec.BestChoices = ChoiceNames(params, rec.BestX)
	rec.BestObservedChoices = ChoiceNames(params, rec.BestObservedX)
}

// BudgetError is returned by OpenStudy when the new iteration budget
// (Options.Iters) is below the BO iterations the study has already run:
// the budget is the study's new total, not a number of iterations to add.
type BudgetError struct {
	Iters int // the budget asked for
	Done  int // BO iterations already run
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("an iteration budget of %d is below the %d BO iterations already run: the budget is the new total, not a number to add (%d would run %d more)",
		e.Iters, e.Done, e.Done+e.Iters, e.Iters)
}

// checkStoredBudget refuses a positive new budget iters below the BO
// iterations stored study id has run. It only reads: a holder of the
// study's lease can only add iterations, so a budget refused here stays
// refused.
func checkStoredBudget(ctx context.Context, db *store.DB, id int64, iters int) error {
	if iters <= 0 {
		return nil
	}
	its, err := db.Iterations(ctx, id)
	if err != nil {
		return err
	}
	done := 0
	for _, it := range its {
		done = max(done, it.Iteration)
	}
	if iters < done {
		return &BudgetError{Iters: iters, Done: done}
	}
	return nil
}

// restoreLastRecord keeps a reopened study's latest stored record, so that
// a Run with nothing left to do still reports the study's recommendation.
func (s *Study) restoreLastRecord(raw []byte) error {
	if raw == nil {
		return nil
	}
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("bad stored record: %w", err)
	}
	s.lastRecord = &r
	return nil
}

// Result summarizes a Run.
type Result struct {
	Study     string
	Best      *Recommendation // nil if nothing completed
	BestValue *float64        // as in the last Record
	// BestObserved is the best observed trial (nil if nothing completed).
	BestObserved *Trial
	Regret       *float64 // as in the last Record (nil if none or f* unknown)
	Iterations   int      // BO iterations issued
	Evaluations  int      // completed evaluations
	Failures     int      // failed evaluations
	Trials       []Trial
	Elapsed      time.Duration // this Run
	// StudyTime is the time the study has spent over all its runs:
	// fitting, proposing and evaluating (from the first start to the last
	// finish of each iteration's evaluations); pauses between runs do not
	// count.
	StudyTime time.Duration
}

// Optimize runs a new study of obj with options o until o.Iters BO
// iterations are done or ctx is cancelled; see Study.Run.
func Optimize(ctx context.Context, obj sdk.Objective, o Options) (*Result, error) {
	info, err := obj.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("objective info: %w", err)
	}
	// The study takes the configured objective's Info: o.Params may change
	// its space or f* (Run configures it again, as on every resume).
	if err := ConfigureObjective(ctx, obj, info.Name, o); err != nil {
		return nil, err
	}
	if info, err = obj.Info(ctx); err != nil {
		return nil, fmt.Errorf("objective info: %w", err)
	}
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, obj)
}

// Run evaluates the study's trials with obj until the initial design and
// Options.Iters BO iterations are complete: first any trials left in flight
// (a resumed study re-runs them), then Ask, evaluate the batch with
// Options.Parallel workers (timeout, retries with backoff; failures are
// recorded, NaN/Inf count as failures), Tell, and one Record per iteration.
// Each outcome is committed before the next Ask uses it.
//
// Cancelling ctx stops proposing; evaluations in flight may finish and be
// recorded during Options.Grace, then are abandoned (left in flight for a
// later Run). Run then returns the partial Result and an error wrapping
// context.Canceled (or the context's cause). A stored study that loses its
// lease to another process (see Close) stops the same way, with an error
// wrapping store.ErrLeaseLost.
func (s *Study) Run(ctx context.Context, obj sdk.Objective) (*Result, error) {
	start := time.Now()
	ctx, unwatch := s.leaseContext(ctx) // a lost lease stops the run
	defer unwatch()
	if err := s.attach(ctx, obj); err != nil {
		return nil, err
	}
	evalCtx, stop := graceContext(ctx, s.opts.Grace)
	defer stop()
	last := s.lastRecord
	emit := func(recs []Record) {
		for i := range recs {
			last = &recs[i]
			s.cbMu.Lock()
			if s.opts.OnIteration != nil {
				s.opts.OnIteration(recs[i])
			}
			s.cbMu.Unlock()
		}
	}
	// A process stopped between finishing an iteration's batch and storing
	// its record: make the record now (nothing newer was asked, so the data
	// are those the record describes).
	if it := s.Iteration(); it >= 1 {
		s.mu.Lock()
		ts := s.iterationTrials(it)
		s.mu.Unlock()
		recs, err := s.report(evalCtx, obj, ts)
		if err != nil {
			return s.result(start, last), err
		}
		emit(recs)
	}
	for ctx.Err() == nil {
		batch := s.InFlight()
		if len(batch) == 0 {
			if s.Done() {
				break
			}
			var err error
			if batch, err = s.Ask(ctx, 0); err != nil {
				if ctx.Err() != nil {
					break
				}
				return s.result(start, last), err
			}
		}
		if err := s.evaluate(ctx, evalCtx, obj, batch); err != nil {
			return s.result(start, last), err
		}
		recs, err := s.report(evalCtx, obj, batch)
		if err != nil {
			return s.result(start, last), err
		}
		emit(recs)
	}
	res := s.result(start, last)
	if ctx.Err() != nil {
		return res, fmt.Errorf("study %q interrupted after %d evaluations: %w", s.name, res.Evaluations, context.Cause(ctx))
	}
	return res, nil
}

// attach configures obj with the study's parameters and checks that it is
// the study's objective. Configure comes first: the parameters may change
// the objective's space (a dimension), which must then match the study's.
func (s *Study) attach(ctx context.Context, obj sdk.Objective) error {
	o := s.opts
	o.Seed = s.seed
	if err := ConfigureObjective(ctx, obj, s.info.Name, o); err != nil {
		return err
	}
	info, err := obj.Info(ctx)
	if err != nil {
		return fmt.Errorf("objective info: %w", err)
	}
	if err := sameSpace(s.info.Params, info.Params); err != nil {
		return fmt.Errorf("objective %s does not match study %q: %w", info.Name, s.name, err)
	}
	_, canNoiseFree := noiseFreeOf(obj)
	s.mu.Lock()
	s.refine = refines(s.opts.Recommend, canNoiseFree)
	s.mu.Unlock()
	return nil
}

// refines reports whether recommendation mode mode maximizes the posterior
// mean over the whole cube, for an objective that can (canNoiseFree) or
// cannot be evaluated without noise.
func refines(mode string, canNoiseFree bool) bool {
	return mode == RecommendRefine || (mode == RecommendAuto && canNoiseFree)
}

// NoiseFreeOf returns obj's noise-free evaluation when it really has one
// (false for a plugin handle whose plugin does not implement it).
func NoiseFreeOf(obj sdk.Objective) (sdk.NoiseFree, bool) { return noiseFreeOf(obj) }

// noiseFreeOf returns obj's noise-free evaluation when it really has one (a
// plugin handle says whether its plugin implements it).
func noiseFreeOf(obj sdk.Objective) (sdk.NoiseFree, bool) {
	nf, ok := obj.(sdk.NoiseFree)
	if sn, isPlugin := obj.(interface{ SupportsNoiseFree() bool }); ok && isPlugin && !sn.SupportsNoiseFree() {
		return nil, false
	}
	return nf, ok
}

// ConfigureObjective sends an sdk.Configurable objective its run
// parameters: o.Params plus "noise_var" (o.Normalized().NoiseVar) and
// "seed" (o.Seed). An objective that is not configurable (or is a plugin
// handle reporting SupportsConfigure() == false) must get no Params. Run
// does this itself; callers use it to check parameters early.
func ConfigureObjective(ctx context.Context, obj sdk.Objective, name string, o Options) error {
	o = o.Normalized()
	params := map[string]string{}
	for k, v := range o.Params {
		params[k] = v
	}
	c, ok := obj.(sdk.Configurable)
	if sc, isPlugin := obj.(interface{ SupportsConfigure() bool }); ok && isPlugin && !sc.SupportsConfigure() {
		ok = false
	}
	if !ok {
		if len(params) > 0 {
			return fmt.Errorf("objective %s takes no parameters, but %s given", name, countWas(len(params)))
		}
		return nil
	}
	params["noise_var"] = strconv.FormatFloat(o.NoiseVar, 'g', -1, 64)
	params["seed"] = strconv.FormatUint(o.Seed, 10)
	if err := c.Configure(ctx, params); err != nil {
		return fmt.Errorf("configure objective %s: %w", name, err)
	}
	return nil
}

// countWas is "1 was" or "n were".
func countWas(n int) string {
	if n == 1 {
		return "1 was"
	}
	return fmt.Sprintf("%d were", n)
}

// sameParam reports whether a and b declare the same parameter.
func sameParam(a, b sdk.Param) bool {
	return a.Name == b.Name && a.Kind == b.Kind && a.Low == b.Low && a.High == b.High && slices.Equal(a.Choices, b.Choices)
}

func sameSpace(a, b []sdk.Param) error {
	if len(a) != len(b) {
		return fmt.Errorf("study has %d parameters, objective %d", len(a), len(b))
	}
	for i := range a {
		if !sameParam(a[i], b[i]) {
			return fmt.Errorf("parameter %d: study has %+v, objective %+v", i, a[i], b[i])
		}
	}
	return nil
}

// graceContext returns a context for evaluations that is cancelled grace
// after ctx is (immediately for grace < 0), and a stop function.
func graceContext(ctx context.Context, grace time.Duration) (context.Context, func()) {
	ectx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			if grace > 0 {
				t := time.NewTimer(grace)
				select {
				case <-t.C:
				case <-done:
				}
				t.Stop()
			}
			cancel(context.Cause(ctx))
		case <-done:
		}
	}()
	return ectx, func() { close(done); cancel(context.Canceled) }
}

// evaluate runs the batch on Options.Parallel workers. Only storage errors
// are returned; evaluation errors become failed trials.
func (s *Study) evaluate(ctx, evalCtx context.Context, obj sdk.Objective, batch []Trial) error {
	jobs := make(chan Trial)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	workers := min(s.opts.Parallel, len(batch))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				if err := s.evalTrial(ctx, evalCtx, obj, t); err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
				}
			}
		}()
	}
feed:
	for _, t := range batch {
		select {
		case jobs <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return firstErr
}

// maxNeighbourReruns bounds the re-runs of one trial whose evaluation was
// stopped by another evaluation's fault (see neighbourFault), so that a
// plugin whose process always dies cannot keep a trial running forever.
const maxNeighbourReruns = 3

// neighbourFault reports whether err says that the evaluation itself did
// nothing wrong but shared a process with another evaluation that took the
// process down (loader.ErrNeighbourFault: the other call timed out). Such
// an evaluation is re-run at once without counting as an attempt: with
// --retries 0, one hanging evaluation failed every healthy one beside it.
// The error is matched by its method so that host need not import the
// loader.
func neighbourFault(err error) bool {
	var nf interface{ NeighbourFault() bool }
	return errors.As(err, &nf) && nf.NeighbourFault()
}

// evalTrial evaluates one trial with retries and records the outcome; a
// trial abandoned because of cancellation stays in flight.
func (s *Study) evalTrial(ctx, evalCtx context.Context, obj sdk.Objective, t Trial) error {
	reruns := 0
	for attempt := 1; ; attempt++ {
		started := time.Now()
		if err := s.start(t.ID, attempt, started); err != nil {
			return err
		}
		r, err := s.call(evalCtx, obj, t.X)
		secs := time.Since(started).Seconds()
		if evalCtx.Err() != nil {
			return nil // abandoned: re-run on resume
		}
		if neighbourFault(err) && reruns < maxNeighbourReruns {
			if ctx.Err() != nil {
				return nil // shutting down: re-run on resume
			}
			reruns++
			s.log.Info().Int("trial", t.ID).Int("attempt", attempt).Err(err).Msg("evaluation stopped by another evaluation's fault; re-running it (not counted as an attempt)")
			attempt-- // the same attempt again
			continue
		}
		if err == nil && (math.IsNaN(r.Value) || math.IsInf(r.Value, 0)) {
			err = fmt.Errorf("objective returned %v", r.Value)
		}
		if err == nil || attempt > s.opts.Retries {
			if err != nil {
				s.log.Warn().Int("trial", t.ID).Int("attempts", attempt).Err(err).Msg("evaluation failed")
			}
			// Recorded even when ctx is cancelled meanwhile (during the grace).
			return s.finish(context.WithoutCancel(ctx), t.ID, r, err, evalStats{attempts: attempt, started: started, seconds: secs})
		}
		if ctx.Err() != nil {
			return nil // shutting down: leave it in flight for resume rather than retry now
		}
		wait := s.opts.RetryBackoff << (attempt - 1)
		if wait > 30*time.Second || wait <= 0 {
			wait = 30 * time.Second
		}
		s.log.Warn().Int("trial", t.ID).Int("attempt", attempt).Dur("backoff", wait).Err(err).Msg("evaluation failed; retrying")
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil
		}
	}
}

// call runs one evaluation attempt under the per-evaluation timeout. It
// returns when the objective does or when the attempt's context ends, so an
// objective that ignores its context cannot stall the study (its goroutine
// is left to finish on its own). Panics become errors.
func (s *Study) call(evalCtx context.Context, obj sdk.Objective, x []float64) (sdk.Result, error) {
	limit := evalLimit(s.opts.EvalTimeout, obj)
	cctx, cancel := evalCtx, context.CancelFunc(func() {})
	if limit > 0 {
		cctx, cancel = context.WithTimeout(evalCtx, limit)
	}
	defer cancel()
	type outcome struct {
		r   sdk.Result
		err error
	}
	ch := make(chan outcome, 1)
	xc := append([]float64(nil), x...)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o = outcome{err: fmt.Errorf("objective panicked: %v", p)}
			}
			ch <- o
		}()
		if d, ok := obj.(sdk.Detailed); ok {
			o.r, o.err = d.EvaluateDetail(cctx, xc)
		} else {
			o.r.Value, o.err = obj.Evaluate(cctx, xc)
		}
	}()
	select {
	case o := <-ch:
		if o.err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && evalCtx.Err() == nil {
			o.err = fmt.Errorf("evaluation timed out after %v: %w", limit, o.err)
		}
		return o.r, boundedError(o.err)
	case <-cctx.Done():
		if evalCtx.Err() != nil {
			return sdk.Result{}, context.Cause(evalCtx)
		}
		return sdk.Result{}, fmt.Errorf("evaluation timed out after %v", limit)
	}
}

// evalLimit is the host's limit on one evaluation attempt of obj: the
// user's limit, plus the objective's start-up allowance when the objective
// itself bounds each evaluation at no more than the user's limit counted
// from when it is ready to evaluate. A loader objective does (its
// EvalLimits method, matched by method so that host need not import the
// loader): an evaluation re-run after its neighbour's timeout, or the first
// after a crash, waits for a new plugin process, and the time that takes
// must not count against the evaluation, or a healthy re-run under load
// times out. The loader bounds the start-up itself; the host's extended
// limit stays as a backstop.
func evalLimit(limit time.Duration, obj sdk.Objective) time.Duration {
	el, ok := obj.(interface {
		EvalLimits() (call, startup time.Duration)
	})
	if limit <= 0 || !ok {
		return limit
	}
	if call, startup := el.EvalLimits(); call > 0 && call <= limit {
		return limit + startup
	}
	return limit
}

// report builds, stores and returns the records of the BO iterations that
// batch completed.
func (s *Study) report(ctx context.Context, obj sdk.Objective, batch []Trial) ([]Record, error) {
	seen := map[int]bool{}
	var recs []Record
	for _, t := range batch {
		it := t.Iteration
		if it < 1 || seen[it] {
			continue
		}
		seen[it] = true
		s.mu.Lock()
		info := s.iters[it]
		ts := s.iterationTrials(it)
		s.mu.Unlock()
		complete := true
		for _, tt := range ts {
			complete = complete && tt.Status.Done()
		}
		if !complete || info == nil || info.recorded {
			continue
		}
		rec, err := s.record(ctx, obj, it, info, ts)
		if err != nil {
			return recs, err
		}
		nameChoices(&rec, s.info.Params)
		if s.db != nil {
			b, err := json.Marshal(rec)
			if err != nil {
				return recs, fmt.Errorf("encode record: %w", err)
			}
			if err := s.db.SetRecord(context.Background(), s.id, it, b); err != nil {
				return recs, err
			}
		}
		s.mu.Lock()
		info.recorded = true
		s.mu.Unlock()
		recs = append(recs, rec)
	}
	return recs, nil
}

// record builds iteration it's Record.
func (s *Study) record(ctx context.Context, obj sdk.Objective, it int, info *iterInfo, ts []Trial) (Record, error) {
	rec := Record{Iter: it, FitS: info.fitS, ProposeS: info.proposeS, Batch: [][]float64{}, Values: []*float64{}}
	var first, lastT time.Time
	for _, t := range ts {
		rec.Batch = append(rec.Batch, t.X)
		if t.Status == Complete {
			v := t.Value
			rec.Values = append(rec.Values, &v)
		} else {
			rec.Values = append(rec.Values, nil)
		}
		if !t.StartedAt.IsZero() && (first.IsZero() || t.StartedAt.Before(first)) {
			first = t.StartedAt
		}
		if t.FinishedAt.After(lastT) {
			lastT = t.FinishedAt
		}
	}
	if !first.IsZero() && lastT.After(first) {
		rec.EvalS = lastT.Sub(first).Seconds()
	}
	s.mu.Lock()
	rec.Evals, _ = s.counts()
	if b := s.bestObservedLocked(); b != nil {
		v := b.Value
		rec.BestObserved, rec.BestObservedX = &v, b.X
	}
	rc, err := s.recommendLocked(ctx)
	s.mu.Unlock()
	if err != nil {
		return rec, fmt.Errorf("recommend after iteration %d: %w", it, err)
	}
	if rc == nil {
		return rec, nil
	}
	rec.BestX = rc.X
	rec.BestValue = rc.Value
	// f(x̄) for the regret: noise-free when the objective can, else what
	// was observed there.
	f := rc.Value
	nf, ok := noiseFreeOf(obj)
	if ok && !s.noiseFreeBroken && (s.info.Optimum != nil || rc.Value == nil) {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if s.opts.EvalTimeout > 0 {
			cctx, cancel = context.WithTimeout(ctx, s.opts.EvalTimeout)
		}
		v, err := nf.EvaluateNoiseFree(cctx, rc.X)
		cancel()
		switch {
		case err == nil && !math.IsNaN(v) && !math.IsInf(v, 0):
			f = &v
		case ctx.Err() != nil:
			return rec, nil
		default:
			s.noiseFreeBroken = true
			s.log.Warn().Err(err).Float64("value", v).Msg("noise-free evaluation failed; regret uses observed values from now on")
		}
	}
	if rc.Value == nil {
		if f != nil {
			rec.BestValue = f
		} else if !math.IsNaN(rc.Mean) {
			m := rc.Mean
			rec.BestValue = &m
		}
	}
	if s.info.Optimum != nil && f != nil {
		r := *s.info.Optimum - *f
		if s.info.Minimize {
			r = -r
		}
		rec.Regret = &r
	}
	return rec, nil
}

// bestObservedLocked returns the completed trial with the best value (the
// earliest among equals), or nil.
func (s *Study) bestObservedLocked() *Trial {
	var best *Trial
	for i := range s.trials {
		t := &s.trials[i]
		if t.Status != Complete {
			continue
		}
		if best == nil || (!s.info.Minimize && t.Value > best.Value) || (s.info.Minimize && t.Value < best.Value) {
			best = t
		}
	}
	if best == nil {
		return nil
	}
	b := *best
	b.X = append([]float64(nil), best.X...)
	return &b
}

// studyTimeLocked adds up, over the initial design and every BO iteration,
// the fit and proposal times and the span of the evaluations.
func (s *Study) studyTimeLocked() time.Duration {
	var secs float64
	for _, info := range s.iters {
		secs += info.fitS + info.proposeS
	}
	first, last := map[int]time.Time{}, map[int]time.Time{}
	for _, t := range s.trials {
		if t.StartedAt.IsZero() || t.FinishedAt.IsZero() {
			continue
		}
		if t.Iteration == ExternalIteration {
			// Enqueued points are evaluated one by one, whenever given.
			secs += t.EvalSeconds
			continue
		}
		if f, ok := first[t.Iteration]; !ok || t.StartedAt.Before(f) {
			first[t.Iteration] = t.StartedAt
		}
		if t.FinishedAt.After(last[t.Iteration]) {
			last[t.Iteration] = t.FinishedAt
		}
	}
	for it, f := range first {
		if d := last[it].Sub(f); d > 0 {
			secs += d.Seconds()
		}
	}
	return time.Duration(secs * float64(time.Second))
}

// result summarizes the study so far.
func (s *Study) result(start time.Time, last *Record) *Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := &Result{Study: s.name, Iterations: s.lastIter, Elapsed: time.Since(start)}
	res.Evaluations, res.Failures = s.counts()
	res.BestObserved = s.bestObservedLocked()
	res.StudyTime = s.studyTimeLocked()
	res.Trials = make([]Trial, len(s.trials))
	copy(res.Trials, s.trials)
	if last != nil {
		res.BestValue, res.Regret = last.BestValue, last.Regret
	}
	if rc, err := s.recommendLocked(context.Background()); err == nil {
		res.Best = rc
		if res.BestValue == nil && rc != nil {
			res.BestValue = rc.Value
		}
	}
	return res
}
