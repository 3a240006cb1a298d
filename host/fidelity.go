package host

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// MultiFidelity makes a study multi-fidelity: the fidelity of an
// evaluation is the step it runs to (sdk.Info.MaxStep is a full
// evaluation, e.g. the last epoch), and the acquisition chooses it with
// the point (acq.FidelityProposer; the default "tes" does, tes package
// doc "Multi-fidelity").
//
// An evaluation to step s costs CostFixed + s/MaxStep in units of one full
// evaluation. The host stops it at its step through sdk.Report (the
// objective is told to stop once it reports a step at or past it) and
// stores it as pruned at that step; a trial run to MaxStep is complete.
// The GP is over (x, t), t = step/MaxStep the last input, and sees every
// reported intermediate value of every finished trial at its t, thinned
// to at most maxFidelityPoints steps a trial (fidelityRows). The initial
// design runs at full fidelity, and the recommendation is the complete
// trial with the largest posterior mean at t = 1 (recommendFidelity: a
// stopped trial's value is not the objective's), or with RecommendRefine
// the maximizer of that mean over the space.
//
// With Ask and Tell, a trial's Meta["fidelity_step"] is the step it runs
// to (absent: MaxStep), and Study.Report says stop once a report reaches
// it.
//
// A multi-fidelity study needs an objective that declares MaxStep ≥ 2 and
// one output, runs without a pruner or a local model, and in one process
// (not as workers on a shared database). Fixed parameters (Options.Fixed,
// Ask's Fix) pin x's coordinates as in a study of one fidelity, and
// conditional ones (sdk.Param.ActiveIf) are inactive as there; the
// fidelity stays the acquisition's choice.
type MultiFidelity struct {
	Enabled bool `json:"enabled,omitempty"`
	// CostFixed is c0, the cost every evaluation pays whatever its step,
	// in units of one full evaluation, 0 to MaxFidelityCostFixed.
	CostFixed float64 `json:"cost_fixed,omitempty"`
}

// MaxFidelityCostFixed bounds MultiFidelity.CostFixed.
const MaxFidelityCostFixed = 100

// fidelityStepKey is the trial metadata key holding the step a
// multi-fidelity trial runs to (absent: MaxStep). It is stored with the
// trial when it is proposed, so a resumed study stops it where the
// uninterrupted one would.
const fidelityStepKey = "fidelity_step"

// maxFidelityPoints is the most intermediate values of one trial the GP
// sees, and maxFidelityRows the total above which trials see fewer
// (fidelityRows).
const (
	maxFidelityPoints = 6
	maxFidelityRows   = 300
)

// validate checks the settings against the other options.
func (m MultiFidelity) validate(o Options) error {
	if !(m.CostFixed >= 0 && m.CostFixed <= MaxFidelityCostFixed) {
		return fmt.Errorf("fidelity fixed cost %v outside [0, %d]", m.CostFixed, MaxFidelityCostFixed)
	}
	switch {
	case !m.Enabled && m.CostFixed != 0:
		return fmt.Errorf("a fidelity cost needs a multi-fidelity study (--multi-fidelity)")
	case !m.Enabled:
		return nil
	case o.Pruning.Rule != "":
		return fmt.Errorf("a multi-fidelity study chooses where evaluations stop itself: run it without a pruner")
	case o.Suggester != nil:
		return fmt.Errorf("a multi-fidelity study needs an acquisition that chooses fidelities, not a suggester")
	case o.Model == ModelLocal:
		return fmt.Errorf("a multi-fidelity study fits the exact model: run it without the local model")
	}
	return nil
}

// fidelity is a multi-fidelity study's view of its steps and costs, or a
// pruned study's whose GP models the curves (Pruning.Model =
// PruneModelCurve; pruned set).
type fidelity struct {
	maxStep int
	cost    acq.FidelityCost
	// pruned: the pruner stops evaluations and the acquisition proposes at
	// t = 1; the GP is the same as a multi-fidelity study's.
	pruned bool
}

// newFidelity checks that the study can be multi-fidelity (see
// MultiFidelity) and returns its fidelity, nil when it is not one.
func newFidelity(m MultiFidelity, p Pruning, info sdk.Info, space *Space, prop acq.Proposer) (*fidelity, error) {
	f, err := fidelityOf(m, p, info)
	if err != nil || f == nil || f.pruned {
		return f, err
	}
	if _, ok := prop.(acq.FidelityProposer); !ok {
		return nil, fmt.Errorf("the acquisition cannot choose fidelities: a multi-fidelity study needs one that does, such as tes")
	}
	return f, nil
}

// fidelityOf is the fidelity of a study with these settings and objective
// (nil when its GP has no fidelity input), whatever its acquisition: what
// a stored study's model is rebuilt with (storedFidelity).
func fidelityOf(m MultiFidelity, p Pruning, info sdk.Info) (*fidelity, error) {
	if p.Model == PruneModelCurve {
		return curveModel(p, info)
	}
	if !m.Enabled {
		return nil, nil
	}
	switch {
	case info.MaxStep < 2:
		return nil, fmt.Errorf("objective %s declares max step %d: a multi-fidelity study needs at least 2 steps (if a parameter sets them, e.g. cnn's epochs, raise it with --param epochs=N; a plugin author declares sdk.Info.MaxStep ≥ 2)", info.Name, info.MaxStep)
	case len(info.Outputs) > 0:
		return nil, fmt.Errorf("objective %s has %d outputs: a multi-fidelity study needs one", info.Name, len(info.Outputs))
	}
	return &fidelity{maxStep: info.MaxStep, cost: acq.FidelityCost{Fixed: m.CostFixed, Steps: info.MaxStep}}, nil
}

// t is the GP's fidelity input of step: step/MaxStep in a multi-fidelity
// study, where the acquisition's cost is linear in it; log(step)/log(MaxStep)
// for the curve model, whose learning curves rise fastest in their first
// steps — on the log scale they are closer to what a stationary kernel
// describes, and the curve model reached full training's regret sooner
// with it (docs/results/pruning).
func (f *fidelity) t(step int) float64 {
	if f.pruned {
		// A report past a pruner's max step set below the objective's
		// last counts as full training.
		step = min(max(step, 1), f.maxStep)
		return math.Log(float64(step)) / math.Log(float64(f.maxStep))
	}
	return float64(step) / float64(f.maxStep)
}

// curveModel is newFidelity for a pruned study whose GP models the curves
// (Pruning.Model = PruneModelCurve).
func curveModel(p Pruning, info sdk.Info) (*fidelity, error) {
	maxStep := p.MaxStep
	if maxStep == 0 {
		maxStep = info.MaxStep
	}
	switch {
	case maxStep < 2:
		return nil, fmt.Errorf("objective %s declares max step %d: the pruner's curve model needs the last step of a full evaluation (sdk.Info.MaxStep ≥ 2, or the pruner's max step)", info.Name, maxStep)
	case len(info.Outputs) > 0:
		return nil, fmt.Errorf("objective %s has %d outputs: the pruner's curve model needs one", info.Name, len(info.Outputs))
	}
	return &fidelity{maxStep: maxStep, cost: acq.FidelityCost{Steps: maxStep}, pruned: true}, nil
}

// studyProposer returns a reopened study's proposer (Options.Proposer,
// else the named acquisition; none with a Suggester) and its fidelity (nil
// unless multi-fidelity).
func (o Options) studyProposer(info sdk.Info, space *Space) (acq.Proposer, *fidelity, error) {
	prop := o.Proposer
	if prop == nil && o.Suggester == nil {
		var err error
		if prop, err = acq.Lookup(o.Acquisition, o.AcqOptions); err != nil {
			return nil, nil, err
		}
	}
	mf, err := newFidelity(o.MultiFidelity, o.Pruning, info, space, prop)
	return prop, mf, err
}

// targetStepLocked is the step trial id runs to (s.mu held).
func (s *Study) targetStepLocked(id int) int {
	if v, ok := s.trials[id].Meta[fidelityStepKey]; ok {
		if k, err := strconv.Atoi(v); err == nil {
			return k
		}
	}
	return s.mf.maxStep
}

// fidelityUnreported refuses, after the fact, an objective that reports
// nothing: trial id of a multi-fidelity study, proposed to stop below the
// last step, ended complete without one intermediate value. It ran in
// full while the acquisition counted it at its step's cost, so going on
// would spend full evaluations on a cost model that does not hold. A
// plugin cannot say upfront that it never reports (the sdk serves every
// objective as able to), hence the check on the first such trial, which
// is stored before the study stops.
func (s *Study) fidelityUnreported(id int) error {
	if s.mf == nil || s.mf.pruned {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, target := s.trials[id], s.targetStepLocked(id)
	if t.Status != Complete || target >= s.mf.maxStep || len(t.Intermediates) > 0 {
		return nil
	}
	return inputError(fmt.Errorf("objective %s reported no intermediate value (sdk.Report) in trial %d, proposed to stop at step %d of %d: it ran in full, so multi-fidelity cannot save its cost (the trial is stored); report each step from the objective and resume, or start a new study without --multi-fidelity",
		s.info.Name, id, target, s.mf.maxStep))
}

// fidelityCurve is the sdk.Reporter of an attempt that runs to step
// target: it says stop once a step at or past target is reported, unless
// target is the last step (the trial then completes).
func (f *fidelity) curve(target int) *trialCurve {
	return &trialCurve{decide: func(p []Intermediate) bool {
		return target < f.maxStep && p[len(p)-1].Step >= target
	}}
}

// keepFidelityStep returns the metadata an evaluation returned with the
// trial's target step kept (a multi-fidelity trial's outcome must say
// where it was stopped, also after the objective's metadata replaced the
// proposal's).
func keepFidelityStep(old, got map[string]string) map[string]string {
	v, ok := old[fidelityStepKey]
	if !ok {
		return got
	}
	out := make(map[string]string, len(got)+1)
	for k, x := range got {
		out[k] = x
	}
	out[fidelityStepKey] = v
	return out
}

// fidelityRows returns the steps of a trial's intermediate values (steps
// increasing) the GP sees: at most k of them, geometric back from the last
// (the value nearest below last, last/2, last/4, …), always the last.
func fidelityRows(points []Intermediate, k int) []int {
	n := len(points)
	if n == 0 || k < 1 {
		return nil
	}
	var idx []int
	last := float64(points[n-1].Step)
	i := n - 1
	for j := 0; j < k && i >= 0; j++ {
		target := last / math.Pow(2, float64(j))
		for i >= 0 && float64(points[i].Step) > target {
			i--
		}
		if i < 0 {
			break
		}
		if len(idx) == 0 || idx[len(idx)-1] != i {
			idx = append(idx, i)
		}
		i--
	}
	out := make([]int, len(idx))
	for a, b := range idx {
		out[len(idx)-1-a] = b
	}
	return out
}

// fidelityDataset is the GP's view of a multi-fidelity study's finished
// trials: one row (u, step/MaxStep) per kept intermediate value
// (fidelityRows; at most maxFidelityPoints per trial, fewer when the
// trials are many, so that the rows stay below max(maxFidelityRows,
// trials)), and for a complete trial its value at t = 1; standardized as
// newDataset does. ids holds each row's trial.
func (f *fidelity) dataset(trials []Trial, d int, minimize bool) *dataset {
	ds := &dataset{sign: 1, scale: 1}
	if minimize {
		ds.sign = -1
	}
	finished := 0
	for _, t := range trials {
		if t.Status.modelled() {
			finished++
		}
	}
	if finished == 0 {
		ds.lo, ds.hi = ds.bounds()
		return ds
	}
	k := min(maxFidelityPoints, max(1, maxFidelityRows/finished))
	var rows [][]float64
	var raw []float64
	add := func(t Trial, step int, v float64) {
		u := make([]float64, d+1)
		copy(u, t.U)
		u[d] = f.t(step)
		rows, raw, ds.ids = append(rows, u), append(raw, ds.sign*v), append(ds.ids, t.ID)
	}
	for _, t := range trials {
		if !t.Status.modelled() {
			continue
		}
		pts := t.Intermediates
		if t.Status == Complete {
			// The final value is the objective's at t = 1, whatever the
			// last report says.
			for len(pts) > 0 && pts[len(pts)-1].Step >= f.maxStep {
				pts = pts[:len(pts)-1]
			}
			for _, i := range fidelityRows(pts, k-1) {
				add(t, pts[i].Step, pts[i].Value)
			}
			add(t, f.maxStep, t.Value)
			continue
		}
		for _, i := range fidelityRows(pts, k) {
			add(t, max(pts[i].Step, 1), pts[i].Value)
		}
	}
	ds.X = mat.NewDense(len(rows), d+1, nil)
	for i, u := range rows {
		ds.X.SetRow(i, u)
	}
	ds.standardize(raw)
	return ds
}

// proposeFidelity is propose for a multi-fidelity study: it fits the GP
// over (x, t) and asks the acquisition for q points with their fidelities
// (q×(d+1)); the fallback's points run at full fidelity.
func (s *Study) proposeFidelity(ctx context.Context, t, q int, it *store.Iteration, pins *pinning, fallback func(string) (*mat.Dense, *modelState, error)) (*mat.Dense, *modelState, error) {
	ds := s.mf.dataset(s.trials, s.space.Dim(), s.info.Minimize)
	if ds.n() == 0 {
		return fallback("no completed evaluations yet")
	}
	fr, err := s.fitCached(ctx, ds, t)
	if err != nil {
		return fitFallback(ctx, t, err, fallback)
	}
	it.FitSeconds = fr.seconds
	d := s.space.Dim()
	best, evaluated := ds.best(), ds.n()
	if s.mf.pruned {
		// EI's incumbent and an opening design's count are full training's.
		best, evaluated = ds.bestAt(d, 1), ds.trials()
	}
	st := &acq.State{GP: fr.gp, Best: best, Iter: t, Rand: streamRand(s.seed, t, streamPropose), Pending: s.pendingFidelity(), Log: s.log,
		Feasible: xFeasible(s.feasibility(t, nil)), IntStep: s.fidelityIntSteps(), Evaluated: evaluated, Imported: s.importedTrials(), Pinned: s.mf.pins(pins, d),
		Canonical: s.space.canonicalFunc(), Conditional: s.fidelityConditional()}
	t0 := time.Now()
	var X *mat.Dense
	if s.mf.pruned {
		X, err = s.proposeCurve(ctx, st, q)
	} else if X, err = s.proposer.(acq.FidelityProposer).ProposeFidelity(ctx, st, q, s.mf.cost); err == nil {
		err = checkBatch(X, q, d+1)
	}
	it.ProposeSeconds = time.Since(t0).Seconds()
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("propose iteration %d: %w", t, context.Cause(ctx))
		}
		X, ms, _ := fallback(fmt.Sprintf("acquisition %s: %v", s.opts.Acquisition, err))
		ms.Kernel, ms.Params, ms.Noise, ms.N = fr.state.Kernel, fr.state.Params, fr.state.Noise, fr.state.N
		return X, ms, s.carry(ms)
	}
	ms := *fr.state
	return X, &ms, s.carry(&ms)
}

// proposeCurve is the acquisition's batch for a pruned study whose GP
// models the curves (fidelity.pruned): st pins t to 1 (fidelity.pins).
func (s *Study) proposeCurve(ctx context.Context, st *acq.State, q int) (*mat.Dense, error) {
	d := s.space.Dim()
	X, err := s.proposer.Propose(ctx, st, q)
	if err == nil {
		err = checkBatch(X, q, d+1)
	}
	if err == nil {
		X, err = s.avoidFailures(ctx, st, X, st.Iter)
	}
	if err == nil {
		// The pruner decides where evaluations stop, whatever t the
		// proposer returned (a plugin acquisition may not honour pins).
		for i := range q {
			X.Set(i, d, 1)
		}
	}
	return X, err
}

// xFeasible is a success probability learnt on x, read on (x, t): the
// evaluations fail or succeed by their point, whatever step they are
// stopped at (nil for nil).
func xFeasible(f acq.Feasible) acq.Feasible {
	if f == nil {
		return nil
	}
	return dropT{f}
}

// dropT is xFeasible's acq.Feasible.
type dropT struct{ f acq.Feasible }

// LogProb implements acq.Feasible; the gradient in t is 0.
func (p dropT) LogProb(u, grad []float64) float64 {
	n := len(u) - 1
	if grad == nil {
		return p.f.LogProb(u[:n], nil)
	}
	grad[n] = 0
	return p.f.LogProb(u[:n], grad[:n])
}

// pins is acq.State.Pinned for the GP over (x, t) of a d-dimensional
// space: the unit-cube pins of x, NaN where free, and t free in a
// multi-fidelity study (nil without pins) or pinned to 1 in a pruned one.
func (f *fidelity) pins(pins *pinning, d int) []float64 {
	switch {
	case f.pruned:
		return pinsOverXT(pins, d, 1)
	case pins.unit() == nil:
		return nil
	}
	return pinsOverXT(pins, d, math.NaN())
}

// pinsOverXT is acq.OptimizeSettings.Pinned for the GP over (x, t) of a
// d-dimensional space: x's unit-cube pins (NaN where free) and t (NaN:
// free).
func pinsOverXT(pins *pinning, d int, t float64) []float64 {
	out := make([]float64, d+1)
	for i := range out {
		out[i] = math.NaN()
	}
	copy(out, pins.unit())
	out[d] = t
	return out
}

// fidelityConditional is acq.State.Conditional for the GP over (x, t): the
// space's, and t unconditional (nil without conditions). The canonical map
// needs no such extension: it reads and writes x's coordinates only.
func (s *Study) fidelityConditional() []bool {
	c := s.space.conditionalCoords()
	if c == nil {
		return nil
	}
	return append(c, false)
}

// fidelityIntSteps is IntStep for the GP over (x, t): the space's, and 0
// for t.
func (s *Study) fidelityIntSteps() []float64 {
	st := s.space.intSteps()
	if st == nil {
		return nil
	}
	return append(append([]float64(nil), st...), 0)
}

// pendingFidelity stacks the trials in flight as (u, target/MaxStep) (nil
// if none).
func (s *Study) pendingFidelity() *mat.Dense {
	fl := s.inFlightLocked()
	if len(fl) == 0 {
		return nil
	}
	d := s.space.Dim()
	P := mat.NewDense(len(fl), d+1, nil)
	for i, t := range fl {
		copy(P.RawRowView(i), t.U)
		P.Set(i, d, s.mf.t(s.targetStepLocked(t.ID)))
	}
	return P
}

// splitFidelity splits a multi-fidelity proposal into its points (q×d)
// and the steps they run to; a proposal of d columns (a fallback) runs at
// full fidelity.
func (f *fidelity) split(X *mat.Dense, d int) (*mat.Dense, []int) {
	q, c := X.Dims()
	steps := make([]int, q)
	for i := range steps {
		steps[i] = f.maxStep
		if c == d+1 {
			steps[i] = int(math.Round(f.cost.Snap(X.At(i, d)) * float64(f.maxStep)))
		}
	}
	if c == d {
		return X, steps
	}
	return mat.DenseCopyOf(X.Slice(0, q, 0, d)), steps
}

// atFullTraining returns the points U (rows of unit-cube coordinates) as
// inputs of a GP over (u, t), each at full training, t = 1.
func atFullTraining(U *mat.Dense) *mat.Dense {
	q, d := U.Dims()
	X := mat.NewDense(q, d+1, nil)
	for i := range q {
		row := X.RawRowView(i)
		copy(row, U.RawRowView(i))
		row[d] = 1
	}
	return X
}

// recommendFidelity is the recommendation of a study whose GP has a
// fidelity input (multi-fidelity, or a pruned study's curve model): the
// complete trial with the largest posterior mean at full training, t = 1
// — the user's rule for noisy values, as in a study without a fidelity —
// or, when the GP cannot be fitted, the one with the best observed value.
// A refining study (RecommendRefine, or RecommendAuto with a noise-free
// objective) then searches the mean at t = 1 over the whole space for the
// paper's x̄, as a study without a fidelity does (refineMean).
func (s *Study) recommendFidelity(ctx context.Context) (*Recommendation, error) {
	best := -1
	sign := 1.0
	if s.info.Minimize {
		sign = -1
	}
	var ids []int
	for _, slice := range []bool{true, false} { // on the pinned slice when any is complete there (bestComplete)
		for i, t := range s.trials {
			if t.Status == Complete && (!slice || s.onSlice(t)) {
				ids = append(ids, i)
				if best < 0 || sign*t.Value > sign*s.trials[best].Value {
					best = i
				}
			}
		}
		if best >= 0 {
			break
		}
	}
	if best < 0 {
		return nil, nil
	}
	d := s.space.Dim()
	ds := s.mf.dataset(s.trials, d, s.info.Minimize)
	fr, err := s.fitCached(ctx, ds, s.lastIter+1)
	if ctx.Err() != nil {
		return nil, err
	}
	if err != nil {
		s.log.Warn().Err(err).Msg("recommending the best observation: the GP could not be fitted")
		return s.evaluatedRec(best, math.NaN()), nil
	}
	U := mat.NewDense(len(ids), d, nil)
	for k, id := range ids {
		U.SetRow(k, s.trials[id].U)
	}
	k, mean := acq.BestMeanAt(fr.gp, atFullTraining(U))
	rec := s.evaluatedRec(ids[k], ds.native(mean[k]))
	offSlice := !s.onSlice(s.trials[ids[k]])
	if !s.refine && !offSlice {
		return rec, nil
	}
	start := atFullTraining(mat.NewDense(1, d, s.trials[ids[k]].U))
	return s.refineMean(ctx, fr.gp, modelCoords{fidelity: true}, start, pinsOverXT(s.pins, d, 1), sliceBest(mean[k], offSlice), ds, rec)
}
