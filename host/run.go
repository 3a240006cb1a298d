package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// BudgetError is returned by OpenStudy when the new iteration budget
// (Options.Iters) is below the BO iterations the study has already run:
// the budget is the study's new total, not a number of iterations to add.
// The budget counts evaluations (Iters × Batch after the initial design),
// so with AutoBatch Done is the BO evaluations issued over Batch, rounded
// up.
type BudgetError struct {
	Iters int // the budget asked for
	Done  int // BO iterations already run
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("an iteration budget of %d is below the %d BO iterations already run: the budget is the new total, not a number to add (%d would run %d more)",
		e.Iters, e.Done, e.Done+e.Iters, e.Iters)
}

// checkStoredBudget refuses a positive new budget of iters iterations of
// batch evaluations below the BO evaluations stored study id has issued.
// It only reads: a holder of the study's lease can only add trials, so a
// budget refused here stays refused.
func checkStoredBudget(ctx context.Context, db store.Storage, id int64, o Options) error {
	if o.Iters <= 0 {
		return nil
	}
	ts, err := db.Trials(ctx, id)
	if err != nil {
		return err
	}
	issued := 0
	for _, t := range ts {
		if t.Iteration >= 1 {
			issued++
		}
	}
	if o.Iters*o.Batch < issued {
		return &BudgetError{Iters: o.Iters, Done: (issued + o.Batch - 1) / o.Batch}
	}
	return checkImportBudget(importedCount(ts), o)
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
	Pruned       int      // evaluations stopped early (Options.Pruning)
	Trials       []Trial
	Elapsed      time.Duration // this Run
	// StudyTime is the time the study has spent over all its runs:
	// fitting, proposing and evaluating (from the first start to the last
	// finish of each iteration's evaluations); pauses between runs do not
	// count.
	StudyTime time.Duration
	// Multi is the last Record's several-output summary (the Pareto set,
	// hypervolume, feasibility) for an objective with several outputs;
	// Best and BestObserved are then nil.
	Multi *MultiRecord
}

// Optimize runs a new study of obj with options o until its budget (the
// initial design plus o.Iters × o.Batch evaluations) is finished or ctx is
// cancelled; see Study.Run.
func Optimize(ctx context.Context, obj sdk.Objective, o Options) (*Result, error) {
	info, err := objectiveInfo(ctx, obj)
	if err != nil {
		return nil, err
	}
	// The study takes the configured objective's Info: o.Params may change
	// its space or f* (Run configures it again, as on every resume).
	if err := ConfigureObjective(ctx, obj, info.Name, o); err != nil {
		return nil, err
	}
	if info, err = objectiveInfo(ctx, obj); err != nil {
		return nil, err
	}
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, obj)
}

// objectiveInfo is obj.Info with a panic turned into an error, as an
// evaluation's panic is.
func objectiveInfo(ctx context.Context, obj sdk.Objective) (info sdk.Info, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("objective info: panicked: %v", p)
		}
	}()
	if info, err = obj.Info(ctx); err != nil {
		return info, fmt.Errorf("objective info: %w", err)
	}
	return info, nil
}

// Run evaluates the study's trials with obj until its budget is finished:
// the initial design plus Options.Iters × Options.Batch evaluations (with
// AutoBatch, Batch is the largest batch and an iteration may issue fewer).
// It is the engine of engine.go run as one local worker: Options.Parallel
// slots evaluate the trials in flight (a resumed study re-runs them first)
// with a timeout and retries with backoff (failures are recorded, NaN/Inf
// count as failures), and when nothing is in flight the next batch is
// asked for, after the finished iteration's Record is stored. Each outcome
// is committed before the next Ask uses it.
//
// Cancelling ctx stops proposing; evaluations in flight may finish and be
// recorded during Options.Grace, then are abandoned (left in flight for a
// later Run). Run then returns the partial Result and an error wrapping
// context.Canceled (or the context's cause). A stored study that loses its
// lease to another process (see Close) stops the same way, with an error
// wrapping store.ErrLeaseLost.
func (s *Study) Run(ctx context.Context, obj sdk.Objective) (*Result, error) {
	if !s.running.CompareAndSwap(false, true) {
		return nil, errors.New("run: the study is running already (Study.Run was called again before the first returned): wait for it")
	}
	defer s.running.Store(false)
	start := time.Now()
	ctx, unwatch := s.leaseContext(ctx) // a lost lease stops the run
	defer unwatch()
	if err := s.attach(ctx, obj); err != nil {
		return nil, err
	}
	evalCtx, stop := graceContext(ctx, s.opts.Grace)
	defer stop()
	l := newLocalEngine(s, obj, evalCtx)
	// A process stopped between finishing an iteration's batch and storing
	// its record: make the record now (nothing newer was asked, so the data
	// are those the record describes).
	if it := s.Iteration(); it >= 1 {
		s.mu.Lock()
		ts := s.iterationTrials(it)
		s.mu.Unlock()
		recs, err := s.report(evalCtx, obj, ts)
		if err != nil {
			return s.result(ctx, start, l.last), err
		}
		l.emit(recs)
	}
	e := engine{q: l, p: l, slots: max(s.opts.Parallel, 1), log: s.log}
	if err := e.run(ctx, evalCtx); err != nil && ctx.Err() == nil {
		return s.result(ctx, start, l.last), err
	}
	res := s.result(ctx, start, l.last)
	if ctx.Err() != nil {
		return res, fmt.Errorf("study %q interrupted after %d evaluations: %w", s.name, res.Evaluations, context.Cause(ctx))
	}
	s.cbMu.Lock()
	defer s.cbMu.Unlock()
	return res, s.cbErr
}

// attach configures obj with the study's parameters and checks that it is
// the study's objective. Configure comes first: the parameters may change
// the objective's space (a dimension), which must then match the study's.
func (s *Study) attach(ctx context.Context, obj sdk.Objective) error {
	if !s.configured {
		o := s.opts
		o.Seed = s.seed
		if err := attachObjective(ctx, obj, s.name, s.info, o); err != nil {
			return err
		}
	}
	_, canNoiseFree := NoiseFreeOf(obj)
	s.mu.Lock()
	s.refine = refines(s.opts.Recommend, canNoiseFree)
	s.mu.Unlock()
	return nil
}

// attachObjective sends obj the run parameters of study name (normalized
// options o, seed included) and checks that its space is the study's
// (info). Configure comes first: the parameters may change the
// objective's space (a dimension), which must then match the study's.
func attachObjective(ctx context.Context, obj sdk.Objective, name string, info sdk.Info, o Options) error {
	if err := configure(ctx, obj, info.Name, o); err != nil {
		return inputError(err) // as when the study was made (Start)
	}
	got, err := objectiveInfo(ctx, obj)
	if err != nil {
		return err
	}
	err = sameSpace(info.Params, got.Params)
	if err == nil {
		err = sameOutputs(info, got)
	}
	if err == nil && info.MaxStep != got.MaxStep && (o.Pruning.Rule != "" || o.MultiFidelity.Enabled) {
		// The steps say how far a trial was trained: another last step
		// would read half-trained values as full ones.
		err = fmt.Errorf("its last step (MaxStep) is %d, the study's %d", got.MaxStep, info.MaxStep)
	}
	if err != nil {
		return fmt.Errorf("%w: objective %s, study %q: %w (restore the objective as the study has it, or start a new study that warm-starts from this one)", ErrObjectiveChanged, got.Name, name, err)
	}
	return nil
}

// ErrObjectiveChanged: a stored study's objective now declares another
// space or other outputs than the study was made with (resume, workers).
var ErrObjectiveChanged = errors.New("the objective does not match the study")

// sameOutputs checks that the objective still returns what the study
// stored: the same direction for one value, or the same outputs (names,
// goals, constraints' sides and bounds) in the same order. The study
// judges every value by its stored Info, so a renamed output or a flipped
// goal would otherwise be read as the old one without a word.
func sameOutputs(study, obj sdk.Info) error {
	if len(study.Outputs) == 0 && len(obj.Outputs) == 0 {
		if study.Minimize != obj.Minimize {
			return fmt.Errorf("the study %s the value, the objective now %s it", direction(study.Minimize), direction(obj.Minimize))
		}
		return nil
	}
	if len(study.Outputs) != len(obj.Outputs) {
		return fmt.Errorf("study has %d outputs, objective %d", len(study.Outputs), len(obj.Outputs))
	}
	for k, a := range study.Outputs {
		b := obj.Outputs[k]
		if a.Name != b.Name || a.Goal != b.Goal || a.Feasible != b.Feasible || (a.Bound == nil) != (b.Bound == nil) ||
			a.Bound != nil && *a.Bound != *b.Bound {
			return fmt.Errorf("output %d: study has %s, objective %s", k, outputText(a), outputText(b))
		}
	}
	return nil
}

// outputText is an output as messages show it: "cost (minimize)", "budget
// (constraint ≤ 1.2)".
func outputText(o sdk.Output) string {
	if o.Goal != sdk.Constraint || o.Bound == nil {
		return fmt.Sprintf("%s (%v)", o.Name, o.Goal)
	}
	side := "≤"
	if o.Feasible == sdk.AtLeast {
		side = "≥"
	}
	return fmt.Sprintf("%s (constraint %s %v)", o.Name, side, *o.Bound)
}

// refines reports whether recommendation mode mode maximizes the posterior
// mean over the whole cube, for an objective that can (canNoiseFree) or
// cannot be evaluated without noise.
func refines(mode string, canNoiseFree bool) bool {
	return mode == RecommendRefine || (mode == RecommendAuto && canNoiseFree)
}

// NoiseFreeOf returns obj's noise-free evaluation when it really has one
// (false for a plugin handle whose plugin does not implement it).
func NoiseFreeOf(obj sdk.Objective) (sdk.NoiseFree, bool) {
	nf, ok := obj.(sdk.NoiseFree)
	if sn, isPlugin := obj.(NoiseFreeSupporter); ok && isPlugin && !sn.SupportsNoiseFree() {
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
	return configure(ctx, obj, name, o.Normalized())
}

// configure is ConfigureObjective for normalized options.
func configure(ctx context.Context, obj sdk.Objective, name string, o Options) error {
	params := map[string]string{}
	for k, v := range o.Params {
		params[k] = v
	}
	c, ok := obj.(sdk.Configurable)
	if sc, isPlugin := obj.(ConfigureSupporter); ok && isPlugin && !sc.SupportsConfigure() {
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
	return a.Name == b.Name && a.Kind == b.Kind && a.Low == b.Low && a.High == b.High && slices.Equal(a.Choices, b.Choices) &&
		sameCondition(a.ActiveIf, b.ActiveIf)
}

func sameCondition(a, b *sdk.Condition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Parent == b.Parent && slices.Equal(a.Values, b.Values)
}

// ParamText is a parameter as messages and listings show it: "lr
// logfloat [0.0001, 1]", "opt categorical {sgd, adam}", a conditional one
// with its condition ("m float [0, 1] if opt = sgd", "if opt ∈ {a, b}").
func ParamText(p sdk.Param) string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	t := fmt.Sprintf("%s %s [%s, %s]", p.Name, p.Kind, g(p.Low), g(p.High))
	if p.Kind == sdk.Categorical {
		t = fmt.Sprintf("%s %s {%s}", p.Name, p.Kind, strings.Join(p.Choices, ", "))
	}
	switch c := p.ActiveIf; {
	case c == nil:
	case len(c.Values) == 1:
		t += fmt.Sprintf(" if %s = %s", c.Parent, c.Values[0])
	default:
		t += fmt.Sprintf(" if %s ∈ {%s}", c.Parent, strings.Join(c.Values, ", "))
	}
	return t
}

func sameSpace(a, b []sdk.Param) error {
	if len(a) != len(b) {
		return fmt.Errorf("study has %d parameters, objective %d", len(a), len(b))
	}
	for i := range a {
		if !sameParam(a[i], b[i]) {
			return fmt.Errorf("parameter %d: study has %s, objective %s", i, ParamText(a[i]), ParamText(b[i]))
		}
	}
	return nil
}

// result summarizes the study so far. Its recommendation is made even when
// ctx is cancelled (an interrupted Run still reports its best point).
func (s *Study) result(ctx context.Context, start time.Time, last *Record) *Result {
	s.mu.Lock()
	res := &Result{Study: s.name, Iterations: s.lastIter, Elapsed: time.Since(start)}
	res.Evaluations, res.Failures, res.Pruned = s.counts()
	res.BestObserved = s.bestObservedLocked()
	res.StudyTime = s.studyTimeLocked()
	res.Trials = make([]Trial, len(s.trials))
	copy(res.Trials, s.trials)
	s.mu.Unlock()
	if last != nil {
		res.BestValue, res.Regret = last.BestValue, last.Regret
	}
	if len(s.info.Outputs) > 0 {
		res.BestObserved = nil
		if last != nil {
			res.Multi = last.MultiRecord
		}
		return res
	}
	if rc, err := s.recommendOnView(context.WithoutCancel(ctx)); err == nil {
		res.Best = rc
		if res.BestValue == nil && rc != nil {
			res.BestValue = rc.Value
		}
	}
	return res
}
