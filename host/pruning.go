package host

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/tesbo/tesbo/prune"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// Pruner names (Pruning.Rule): the stopping rules of package prune.
const (
	PrunerMedian    = "median"
	PrunerASHA      = "asha"
	PrunerHyperband = "hyperband"
)

// Bounds of the pruning settings.
const (
	MaxPrunerEta     = 100
	MaxPrunerStartup = 10000
)

// Pruning chooses how a study stops evaluations early from the
// intermediate values they report (sdk.Report). The zero value stops none.
//
// A trial stopped early is stored as pruned with the last value and step
// it reported and counts in the study's budget; recommendations never pick
// it. How the GP sees it is Model's choice. The curve model
// (PruneModelCurve) fits one GP over the parameters and the step to every
// report, so a pruned trial is an observation where it stopped. The
// stand-in (PruneModelLast) shows it at its last value as if that were
// its final one: for curves that still rise that is pessimistic, which is
// what keeps the acquisition from proposing the region again, and for
// curves that fall (overfitting) it is optimistic. Kept out of the GP
// entirely, pruned points left no trace: on the learning-curve suite
// (problems/curves) BO with EI then proposed the same pruned region over
// and over and ended worse than training every trial fully. With the
// default acquisition the curve model ended below the stand-in on
// average with every pruner, on the problems its choice was tuned on and
// on the held-out ones, worse beyond noise on one problem with one pruner
// (docs/results/pruning), so a new study takes it wherever it can run.
//
// The pruner compares a trial only with the trials of earlier iterations
// (the initial design is iteration 0), which are finished when it runs in
// Run: its decisions do not depend on which of a batch's parallel
// evaluations finishes first, so the study stays bitwise reproducible,
// also across resume. The initial design is therefore never pruned.
// Workers (RunWorker) compare with the trials of earlier iterations that
// are finished in the database when the value is reported.
type Pruning struct {
	// Rule is "" (none), PrunerMedian, PrunerASHA or PrunerHyperband.
	Rule string `json:"rule,omitempty"`
	// StartupTrials, WarmupSteps and MinTrials configure the median rule
	// (prune.Median; 0 to 10000 trials, 0 to sdk.MaxStepLimit steps).
	StartupTrials int `json:"startup_trials,omitempty"`
	WarmupSteps   int `json:"warmup_steps,omitempty"`
	MinTrials     int `json:"min_trials,omitempty"`
	// MinStep (r, default 1) and Eta (η, default 3, 2 to MaxPrunerEta)
	// configure ASHA and Hyperband (prune.ASHA, prune.Hyperband).
	MinStep int `json:"min_step,omitempty"`
	Eta     int `json:"eta,omitempty"`
	// MaxStep is the last step of a full evaluation (R), 0 for the
	// objective's sdk.Info.MaxStep; Hyperband and PruneModelCurve need one of
	// them.
	MaxStep int `json:"max_step,omitempty"`
	// Model is how the GP sees a pruned trial: PruneModelCurve or
	// PruneModelLast. A new study settles "" (resolvedModel): the curve
	// model where it can run — a pruner, one output, a max step, the
	// exact GP, no suggester, one process (not Launch.Shared) — else the
	// stand-in. A study stored with "" (before the curve model was the
	// default) keeps the stand-in it ran with. Workers (RunWorker) need
	// the stand-in: a study made with NewStudy for them sets
	// PruneModelLast.
	Model string `json:"model,omitempty"`
}

// How the GP sees pruned trials (Pruning.Model).
const (
	// PruneModelLast shows a pruned trial at its last reported value, as if it
	// were the final one (the stand-in described at Pruning).
	PruneModelLast = "last"
	// PruneModelCurve fits the GP over (x, t), t = log step / log MaxStep, on every
	// reported value of every finished trial, as a multi-fidelity study
	// does (MultiFidelity): a pruned trial is an observation at the step
	// it reached, not a guess of its final value. The acquisition
	// proposes on the slice t = 1 (a pinned coordinate, acq.State.Pinned),
	// so it maximizes what it would at full training, and the pruner
	// still decides where evaluations stop.
	PruneModelCurve = "curve"
)

// resolvedModel settles Model "" for a new study of info with options o
// (see Model); a stored study's "" is never resolved, so it keeps the
// stand-in it ran with.
func (p Pruning) resolvedModel(o Options, info sdk.Info) Pruning {
	if p.Model != "" || p.Rule == "" {
		return p
	}
	maxStep := p.MaxStep
	if maxStep == 0 {
		maxStep = info.MaxStep
	}
	p.Model = PruneModelLast
	if maxStep >= 2 && len(info.Outputs) == 0 && o.Model != ModelLocal && o.Suggester == nil {
		p.Model = PruneModelCurve
	}
	return p
}

// normalized fills in ASHA's and Hyperband's defaults.
func (p Pruning) normalized() Pruning {
	if p.Rule == PrunerASHA || p.Rule == PrunerHyperband {
		if p.MinStep == 0 {
			p.MinStep = 1
		}
		if p.Eta == 0 {
			p.Eta = 3
		}
	}
	return p
}

// validate checks the settings (after normalized).
func (p Pruning) validate() error {
	steps := func(name string, v, lo int) error {
		if v < lo || v > sdk.MaxStepLimit {
			return fmt.Errorf("pruner %s %d outside [%d, %d]", name, v, lo, sdk.MaxStepLimit)
		}
		return nil
	}
	switch p.Rule {
	case "", PrunerMedian, PrunerASHA, PrunerHyperband:
	default:
		return fmt.Errorf("unknown pruner %q: known ones are %s, %s, %s", p.Rule, PrunerMedian, PrunerASHA, PrunerHyperband)
	}
	switch p.Model {
	case "", PruneModelLast:
	case PruneModelCurve:
		if p.Rule == "" {
			return fmt.Errorf("the pruner's curve model needs a pruner")
		}
	default:
		return fmt.Errorf("unknown pruner model %q: known ones are %s, %s", p.Model, PruneModelLast, PruneModelCurve)
	}
	if p.StartupTrials < 0 || p.StartupTrials > MaxPrunerStartup || p.MinTrials < 0 || p.MinTrials > MaxPrunerStartup {
		return fmt.Errorf("pruner startup/min trials %d/%d outside [0, %d]", p.StartupTrials, p.MinTrials, MaxPrunerStartup)
	}
	if p.Eta != 0 && (p.Eta < 2 || p.Eta > MaxPrunerEta) {
		return fmt.Errorf("pruner eta %d outside [2, %d]", p.Eta, MaxPrunerEta)
	}
	for _, e := range []error{steps("warm-up steps", p.WarmupSteps, 0), steps("min step", p.MinStep, 0), steps("max step", p.MaxStep, 0)} {
		if e != nil {
			return e
		}
	}
	return nil
}

// pruner builds the rule for an objective that declares info (nil for no
// pruning).
func (p Pruning) pruner(info sdk.Info) (prune.Pruner, error) {
	maxStep := p.MaxStep
	if maxStep == 0 {
		maxStep = info.MaxStep
	}
	if p.MaxStep > 0 && info.MaxStep > 0 && p.MaxStep > info.MaxStep {
		// Reports past the objective's MaxStep are refused: rungs there
		// would never be reached.
		return nil, fmt.Errorf("the pruner's max step %d is past the objective's last step (MaxStep) %d: drop it or set it at most %d", p.MaxStep, info.MaxStep, info.MaxStep)
	}
	switch p.Rule {
	case PrunerMedian:
		if maxStep > 0 && p.WarmupSteps >= maxStep {
			return nil, fmt.Errorf("the median rule's warm-up of %d steps reaches the last step of a full evaluation, %d: it could stop nothing (lower the warm-up)", p.WarmupSteps, maxStep)
		}
		return prune.Median{StartupTrials: p.StartupTrials, WarmupSteps: p.WarmupSteps, MinTrials: p.MinTrials}, nil
	case PrunerASHA:
		if maxStep > 0 && p.MinStep >= maxStep {
			// Its first rung would be at or past the last step: it could
			// stop nothing.
			return nil, fmt.Errorf("asha's min step %d is not below the last step of a full evaluation, %d: it could stop nothing (lower the min step, or set the pruner's max step)", p.MinStep, maxStep)
		}
		return prune.ASHA{MinStep: p.MinStep, Eta: p.Eta, MaxStep: maxStep}, nil
	case PrunerHyperband:
		if maxStep < p.MinStep*p.Eta {
			return nil, fmt.Errorf("hyperband needs the last step of a full evaluation of at least min step × eta = %d, got %d (set the pruner's max step, or declare sdk.Info.MaxStep in the objective)", p.MinStep*p.Eta, maxStep)
		}
		return prune.Hyperband{MinStep: p.MinStep, MaxStep: maxStep, Eta: p.Eta}, nil
	}
	return nil, nil
}

// Intermediate is one value an evaluation reported (sdk.Report): the value
// in native units it reached at Step.
type Intermediate struct {
	Step  int
	Value float64
}

// trialCurve is the sdk.Reporter of one evaluation attempt: it keeps the
// values reported and asks decide (the pruner, against the right history)
// after each; keep, when set, records each value as it comes.
type trialCurve struct {
	decide func(points []Intermediate) bool
	keep   func(p Intermediate, stop bool) error
	full   int // the objective's MaxStep (0: none declared); later steps are refused

	mu     sync.Mutex
	points []Intermediate
	pruned bool
	closed bool // the attempt ended or the trial was told (close): later reports are refused
}

// newCurve returns the Reporter of an attempt at trial id, or nil when the
// study prunes nothing. Its values are stored as they come (liveKeep).
func (s *Study) newCurve(id int) *trialCurve {
	if s.pruner == nil && (s.mf == nil || s.mf.pruned) {
		return nil
	}
	s.mu.Lock()
	c := s.curveLocked(id)
	s.mu.Unlock()
	c.keep = s.liveKeep(id)
	return c
}

// curveLocked returns a new curve for trial id that asks the study's
// rule: its fidelity's stop (multi-fidelity) or its pruner (curveFor;
// none stops nothing), and refuses steps past the objective's MaxStep.
func (s *Study) curveLocked(id int) *trialCurve {
	var c *trialCurve
	if s.mf != nil && !s.mf.pruned {
		c = s.mf.curve(s.targetStepLocked(id))
	} else {
		c = s.curveFor(id)
	}
	c.full = s.info.MaxStep
	return c
}

// liveReportWait bounds the write of one reported value during Run.
const liveReportWait = 10 * time.Second

// liveKeep returns the keep of a Run attempt at trial id: each value is
// shown on the in-flight trial and stored (so the web view draws the curve
// as it grows). The write is best effort, bounded by liveReportWait: the
// outcome stores the whole curve anyway, and an evaluation must not fail
// because a report could not be written. The first failure is logged.
func (s *Study) liveKeep(id int) func(Intermediate, bool) error {
	var warned bool
	return func(p Intermediate, stop bool) error {
		if s.db != nil {
			ctx, cancel := context.WithTimeout(context.Background(), liveReportWait)
			err := s.db.ReportIntermediate(ctx, s.id, id, store.Intermediate(p), stop)
			cancel()
			if err != nil && !warned {
				warned = true
				s.log.Warn().Err(err).Int("trial", id).Msg("could not store an intermediate value as it came; the trial's outcome stores its whole curve")
			}
		}
		s.showReport(id, p, stop)
		return nil
	}
}

// stoppedEarly reports whether an evaluation told to stop (pruned) ended
// before the last step of a full evaluation (full; 0: not known), with
// its value then: the last it reported, whatever the objective returned
// after the stop. One that went on to the full step ran in full: it is
// complete.
func stoppedEarly(curve []Intermediate, pruned bool, full int) (last float64, stopped bool) {
	if !pruned || len(curve) == 0 {
		return 0, false
	}
	p := curve[len(curve)-1]
	if full > 0 && p.Step >= full {
		return 0, false
	}
	return p.Value, true
}

// curveFor returns a Reporter for trial id that asks the study's pruner.
func (s *Study) curveFor(id int) *trialCurve {
	return &trialCurve{decide: func(p []Intermediate) bool { return s.shouldPrune(id, p) }}
}

// Report implements sdk.Reporter. Once the pruner has said stop it keeps
// saying so; the values are still recorded.
func (c *trialCurve) Report(step int, value float64) (bool, error) {
	return c.report(step, value, c.keep)
}

// report is Report, handing the new point and the decision to keep
// (unless nil) before taking them: a point keep fails to record is not
// taken, so the caller may report it again.
func (c *trialCurve) report(step int, value float64, keep func(p Intermediate, stop bool) error) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return false, fmt.Errorf("report step %d: the trial was told: %w", step, ErrNotInFlight)
	case math.IsNaN(value) || math.IsInf(value, 0):
		return false, fmt.Errorf("report: value %v at step %d is not finite", value, step)
	case step < 0 || step > sdk.MaxStepLimit:
		return false, fmt.Errorf("report: step %d outside [0, %d]", step, sdk.MaxStepLimit)
	case c.full > 0 && step > c.full:
		return false, fmt.Errorf("report: step %d is past the objective's last step (sdk.Info.MaxStep) %d", step, c.full)
	case len(c.points) > 0 && step <= c.points[len(c.points)-1].Step:
		return false, fmt.Errorf("report: step %d after step %d: steps must increase", step, c.points[len(c.points)-1].Step)
	}
	p := Intermediate{Step: step, Value: value}
	points := append(c.points, p) // c.points keeps its length until keep succeeds
	stop := c.pruned || c.decide(points)
	if keep != nil {
		if err := keep(p, stop); err != nil {
			return false, err
		}
	}
	c.points, c.pruned = points, stop
	return stop, nil
}

// close returns what an attempt that ended, or a trial being told,
// reported: its values and whether it was told to stop. Later reports are
// refused: one racing it is either in the outcome or refused, never
// accepted and lost (nor, from an abandoned attempt, stored on the next
// one).
func (c *trialCurve) close() ([]Intermediate, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return slices.Clone(c.points), c.pruned
}

// shouldPrune asks the pruner about trial id having reported points,
// against the finished trials of earlier iterations (see Pruning).
func (s *Study) shouldPrune(id int, points []Intermediate) bool {
	if s.pruner == nil {
		return false
	}
	s.mu.Lock()
	iter := s.trials[id].Iteration
	history := pruneHistory(s.trials, iter, s.info.Minimize)
	s.mu.Unlock()
	return s.pruner.Prune(curveOf(id, points, false, s.info.Minimize), history)
}

// newCurve returns the Reporter of a worker's attempt at t (nil without a
// pruner). A worker holds no trials: each decision reads the study's
// finished trials from the database, so it compares with what the workers
// have finished by then (decisions are not reproducible across runs, as
// nothing a worker does is).
//
// Each value is stored as it comes (store's ReportLeased, best effort:
// the outcome stores the whole curve), so that the study's readers see
// the curve grow as in a single process.
func (w *worker) newCurve(ctx context.Context, t *Trial) *trialCurve {
	if w.pruner == nil {
		return nil
	}
	var warned bool
	keep := func(p Intermediate, _ bool) error {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), liveReportWait)
		err := w.db.ReportLeased(wctx, w.id, w.h, t.ID, store.Intermediate(p))
		cancel()
		if err != nil && !warned {
			warned = true
			w.log.Warn().Err(err).Int("trial", t.ID).Msg("could not store an intermediate value as it came; the trial's outcome stores its whole curve")
		}
		return nil
	}
	return &trialCurve{full: w.info.MaxStep, keep: keep, decide: func(p []Intermediate) bool {
		ts, err := loadTrials(ctx, w.db, w.id)
		if err != nil {
			w.log.Warn().Err(err).Int("trial", t.ID).Msg("could not read the study's trials to decide on stopping; the evaluation goes on")
			return false
		}
		return w.pruner.Prune(curveOf(t.ID, p, false, w.minimize), pruneHistory(ts, t.Iteration, w.minimize))
	}}
}

// pruneHistory is what a trial of iteration iter is compared with: the
// curves of the finished (complete or pruned) trials of earlier
// iterations that reported any.
func pruneHistory(trials []Trial, iter int, minimize bool) []prune.Curve {
	var history []prune.Curve
	for _, t := range trials {
		if t.Iteration < iter && (t.Status == Complete || t.Status == Pruned) && len(t.Intermediates) > 0 {
			history = append(history, curveOf(t.ID, t.Intermediates, t.Status == Complete, minimize))
		}
	}
	return history
}

// anyComplete reports whether a trial ran to its end (a recommendation
// needs one: a pruned trial's value is not the objective's).
func (s *Study) anyComplete() bool {
	for _, t := range s.trials {
		if t.Status == Complete {
			return true
		}
	}
	return false
}

// bestComplete returns the row of the model's data (trial IDs ids) with
// the largest score among complete trials, the earliest among equals: the
// GP sees pruned trials too, but a recommendation is a trial that ran to
// its end. Without pruned trials this is the row with the largest score.
// A study with fixed parameters recommends on its pinned slice: among the
// trials there (s.onSlice) when any is complete.
func (s *Study) bestComplete(ids []int, score []float64) int {
	best := -1
	for _, slice := range []bool{true, false} {
		for i, id := range ids {
			t := s.trials[id]
			if t.Status == Complete && (!slice || s.onSlice(t)) && (best < 0 || score[i] > score[best]) {
				best = i
			}
		}
		if best >= 0 {
			break
		}
	}
	return best
}

// onSlice reports whether trial t has the study's fixed parameters
// (Options.Fixed) at their pinned values; every trial does without them.
// Trials imported by a warm start, or asked for with other pins, may not.
func (s *Study) onSlice(t Trial) bool {
	if s.pins == nil {
		return true
	}
	for i, v := range s.pins.x {
		if !math.IsNaN(v) && t.X[i] != v {
			return false
		}
	}
	return true
}

// curveOf is a trial's curve in the maximized sign convention.
func curveOf(id int, points []Intermediate, complete, minimize bool) prune.Curve {
	sign := 1.0
	if minimize {
		sign = -1
	}
	c := prune.Curve{ID: id, Complete: complete, Points: make([]prune.Point, len(points))}
	for i, p := range points {
		c.Points[i] = prune.Point{Step: p.Step, Value: sign * p.Value}
	}
	return c
}
