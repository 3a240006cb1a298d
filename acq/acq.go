// Package acq holds the acquisition-function interface of tesbo, the inner
// optimizer that maximizes an acquisition over a batch of points in the unit
// cube, numerically stable Gaussian helpers (log Φ, inverse Mills ratio,
// log-EI) and the baseline acquisitions the TES paper compares against:
// EI, PI, UCB, MES, PES, qEI, qEI-CL, BUCB, LP-EI, Thompson sampling and
// random search; and, for studies with several outputs (multi.go), the
// baselines nehvi (qLogNEHVI) and cei (constrained EI).
//
// Conventions (shared with package gp): inputs live in [0,1]^d, outputs are
// standardized by the caller, a batch is a *mat.Dense with one point per row
// (q×d), and everything maximizes.
//
// Two forms of acquisition exist. A Scorer prepares a Func (a deterministic
// function of a batch, optionally with its gradient) that the inner optimizer
// maximizes; Optimized turns a Scorer into a Proposer. A Proposer builds its
// batch itself (greedy/sequential batch methods, Thompson sampling, random
// search). The host only ever calls Proposer.Propose; it finds Proposers by
// name in the registry (Lookup). Package tes registers "tes" (the host's
// default), "tes-ep" and "tes-sp" from its own init function. What a
// Proposer can do beyond Propose it declares through small optional
// interfaces (capabilities.go).
package acq

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/rs/zerolog"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// State is one BO iteration's view of the problem.
type State struct {
	// GP is the posterior fitted on [0,1]^d inputs and standardized outputs.
	GP *gp.GP
	// Best is the incumbent: the best (maximum) standardized observed y.
	Best float64
	// Iter is the 1-based BO iteration (UCB's β_t schedule uses it).
	Iter int
	// Rand is this iteration's random stream, derived from the study seed.
	// Acquisitions draw all their randomness from it so that the same seed
	// gives the same run.
	Rand *rand.Rand
	// Pending holds points proposed earlier but not yet evaluated (one per
	// row); may be nil. Each acquisition documents how it accounts for them:
	// joint methods (qEI) include them in the batch, greedy methods treat them
	// as already-chosen batch members, LP-EI penalizes around them.
	Pending *mat.Dense
	// Log receives the acquisition's log events (the host passes its
	// Options.Logger). The zero value discards: a zerolog.Logger without a
	// writer is disabled. Acquisitions never log through zerolog's global
	// logger, so an embedding program sees only what it asked for.
	Log zerolog.Logger
	// Feasible is the probability that an evaluation succeeds, learnt from
	// the failed evaluations so far; nil when none failed. Acquisitions
	// weight their batches by it through FeasibilityWeighted.
	Feasible Feasible
	// IntStep is, for each coordinate of an Int parameter, the width of one
	// integer's bin of the GP's inputs (1/k for k values, in the unit
	// cube), and 0 for every other kind; nil when the space has no Int
	// parameter. Proposals are rounded to bins by the host; an acquisition
	// that searches a small region uses it to reach the neighbouring
	// integers.
	IntStep []float64
	// Evaluated is the number of successful evaluations the study has
	// completed. A local model's GP holds only some of them; a caller that
	// leaves it zero lets acquisitions use GP.N() instead. An acquisition
	// that opens with a space-filling design counts on it.
	Evaluated int
	// Imported is how many of the Evaluated observations a warm start
	// imported from finished studies (measured there, not by this study);
	// zero for a study that was not warm-started. Evaluated − Imported is
	// then the number of the study's own evaluations.
	Imported int
	// Pinned holds, per coordinate, the unit-cube value every proposed
	// point must take (a fixed parameter), NaN for a free coordinate; nil
	// when nothing is pinned. Acquisitions maximize over the free
	// coordinates only by passing it to the inner optimizer (Pin); the
	// host sets the pinned values on whatever comes back.
	Pinned []float64
	// Canonical, on a conditional space, sets the inactive coordinates of
	// a point (length d) to their defaults in place and returns which are
	// inactive; nil otherwise. Acquisitions pass it to the inner optimizer
	// with the pins (Pin), so that they score only points the GP can see.
	Canonical func(x []float64) []bool
	// Conditional marks, on a conditional space, the coordinates active
	// only under a condition: those Canonical may set to a default. Nil
	// otherwise. A search confined to a box around a point keeps them, as
	// categorical ones, whole, so that Canonical reads and writes the same
	// values in the box's coordinates as in the cube's (its parents are
	// categorical).
	Conditional []bool
}

// Dim returns the input dimension d of the problem.
func (s *State) Dim() int { return s.GP.Dim() }

// Func is a prepared acquisition: a deterministic function α(X) of a batch X
// (q×d, rows in [0,1]^d). Eval returns α(X); if grad is non-nil (q×d) and the
// Func is Differentiable with HasGradient() true, Eval also writes ∂α/∂X into
// grad (it may leave grad untouched otherwise).
//
// Eval must be safe for concurrent use by several goroutines: the inner
// optimizer runs its restarts in parallel on one prepared Func. A Func is
// normally read-only after Prepare, with per-call scratch memory.
//
// Eval must not return NaN. It may return -Inf for a batch it rates as
// worthless (e.g. log-EI where EI is exactly zero); the optimizer treats -Inf
// as the worst value.
type Func interface {
	Eval(X, grad *mat.Dense) float64
}

// Differentiable is implemented by Funcs that can fill grad in Eval. The
// optimizer uses analytic gradients when HasGradient reports true and forward
// finite differences otherwise.
type Differentiable interface {
	Func
	HasGradient() bool
}

// Stochastic is implemented by Funcs defined as an expectation that can be
// estimated afresh: EvalSample returns an unbiased (or consistent) Monte-Carlo
// estimate of α(X) using new samples drawn from rng, and its gradient into grad
// when grad is non-nil. The optimizer's Adam mode (the paper's setting: 300
// Adam steps with fresh samples each step) uses it; Eval stays the fixed-sample
// (sample-average) version used for L-BFGS-B and to compare final candidates.
// EvalSample must be safe for concurrent use with distinct rng values.
type Stochastic interface {
	Func
	EvalSample(X, grad *mat.Dense, rng *rand.Rand) float64
}

// Starter is implemented by Funcs that suggest starting batches for the inner
// optimizer (TES: batches built from its trusted maximizers X*). Each start is
// q×d with rows in [0,1]^d; rows outside the box are clipped. The optimizer
// runs one restart from every suggested start in addition to its best raw
// samples.
type Starter interface {
	Starts(q int) []*mat.Dense
}

// Scorer is an acquisition defined by a function to maximize over batches.
type Scorer interface {
	// Prepare does all query-independent work of this iteration (the TES
	// paper's Remark 2: sampling, EP, factorizations) and returns the
	// function to maximize over batches of q points.
	Prepare(ctx context.Context, s *State, q int) (Func, error)
}

// Proposer is an acquisition that returns a batch of q points (q×d, rows in
// [0,1]^d) to evaluate next. It is what the host calls.
type Proposer interface {
	Propose(ctx context.Context, s *State, q int) (*mat.Dense, error)
}

// Carrier is implemented by Proposers that carry state from one BO iteration
// to the next (TES: the last iteration's trusted maximizers, which seed the
// next search). Such state must survive a resume exactly, or a resumed study
// would propose different points than an uninterrupted one: the host stores
// CarriedState with every iteration it proposes and, when a study is
// reopened, hands the latest stored value back through RestoreState before
// the next Propose.
//
// CarriedState returns the state after the latest Propose as JSON (nil when
// there is none yet); RestoreState must make the Proposer behave exactly as
// it did when that value was taken (Go's JSON encoding round-trips float64
// bit for bit).
type Carrier interface {
	Proposer
	CarriedState() ([]byte, error)
	RestoreState(state []byte) error
}

// Optimized turns a Scorer into a Proposer: Propose prepares the Func and
// maximizes it jointly over the q·d coordinates of the batch with Maximize.
type Optimized struct {
	Scorer   Scorer
	Settings OptimizeSettings
}

// Propose implements Proposer.
func (o Optimized) Propose(ctx context.Context, s *State, q int) (*mat.Dense, error) {
	if err := checkState(s, q); err != nil {
		return nil, err
	}
	f, err := o.Scorer.Prepare(ctx, s, q)
	if err != nil {
		return nil, fmt.Errorf("prepare acquisition: %w", err)
	}
	X, _, err := MaximizeMixed(ctx, FeasibilityWeighted(f, s), q, s.Dim(), CategoriesOf(s.GP), s.Pin(o.Settings), s.Rand)
	if err != nil {
		return nil, fmt.Errorf("maximize acquisition: %w", err)
	}
	return X, nil
}

// checkState validates what every Proposer relies on.
func checkState(s *State, q int) error {
	switch {
	case s == nil:
		return fmt.Errorf("acquisition state is nil")
	case s.GP == nil:
		return fmt.Errorf("acquisition state has no GP: fit one before proposing")
	case s.Rand == nil:
		return fmt.Errorf("acquisition state has no random stream (State.Rand)")
	case q < 1:
		return fmt.Errorf("batch size %d: must be at least 1", q)
	}
	if s.Pending != nil {
		if _, c := s.Pending.Dims(); c != s.GP.Dim() {
			return fmt.Errorf("pending points have %d columns, the GP has dimension %d", c, s.GP.Dim())
		}
	}
	return nil
}

// lieKind selects the constant lie of the constant-liar heuristic
// (Ginsbourger et al. 2010): the fantasized value given to a batch member
// while the rest of the batch is chosen.
type lieKind int

const (
	// lieMin lies with the minimum observed y: pessimistic for maximization,
	// so later batch members move away from earlier ones (more exploration).
	// It is the zero value and the default.
	lieMin lieKind = iota
	// lieMean lies with the mean observed y.
	lieMean
	// LieMax lies with the maximum observed y (the incumbent): optimistic,
	// batches cluster more.
	LieMax
	// LieBeliever lies with the posterior mean at the point itself (the
	// "kriging believer"): the posterior mean is unchanged and only the
	// variance shrinks. Greedy batches of single-point acquisitions and BUCB
	// (Desautels et al. 2014, hallucinated observations) use it.
	LieBeliever
)

// String returns the lie's name.
func (l lieKind) String() string {
	switch l {
	case lieMin:
		return "min"
	case lieMean:
		return "mean"
	case LieMax:
		return "max"
	case LieBeliever:
		return "believer"
	}
	return fmt.Sprintf("LieKind(%d)", int(l))
}

// parseLie parses "min", "mean", "max" or "believer".
func parseLie(s string) (lieKind, error) {
	for _, l := range []lieKind{lieMin, lieMean, LieMax, LieBeliever} {
		if l.String() == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown constant-liar lie %q: use min, mean, max or believer", s)
}

// Options configures the registered acquisitions. The zero value gives the
// documented defaults; a field an acquisition does not use is ignored.
type Options struct {
	// Trusted is the number of sampled maximizers x* (|X*| of TES; the
	// number of x* samples of PES; Thompson sampling ignores it).
	// 0 means max(5, q); see TrustedFor.
	Trusted int `json:"trusted"`
	// UCBBeta is the fixed exploration weight β of UCB/BUCB,
	// α = μ + sqrt(β)·σ. 0 selects the GP-UCB schedule of Srinivas et al.
	// (2010), see betaSchedule.
	UCBBeta float64 `json:"ucb_beta"`
	// UCBDelta is the confidence parameter δ of the β_t schedule
	// (0 means 0.1).
	UCBDelta float64 `json:"ucb_delta"`
	// MCSamples is the number of Monte-Carlo samples for sample-based
	// acquisitions: qEI's base samples, TES_sp's samples of y_B, and the
	// samples drawn per step in the stochastic (Adam) mode. 0 means 512.
	MCSamples int `json:"mc_samples"`
	// MaxValueSamples is the number of samples of the maximum value y* for
	// MES. 0 means 10.
	MaxValueSamples int `json:"max_value_samples"`
	// MESGumbel selects the Gumbel approximation of p(y*) (Wang & Jegelka
	// 2017, Sec. 3.1) instead of maxima of whole-function posterior samples.
	MESGumbel bool `json:"mes_gumbel"`
	// PathFeatures is the number of random Fourier features per
	// whole-function posterior sample (MES, PES, TS, TES). 0 means 1000.
	PathFeatures int `json:"path_features"`
	// Lie is the constant lie of qEI-CL (min, mean or max; default min).
	Lie lieKind `json:"lie"`
	// Stochastic selects the paper's optimizer for Funcs that implement
	// Stochastic: Adam with fresh Monte-Carlo samples each step (Optimize.
	// Method is set to Adam). Other Funcs are unaffected.
	Stochastic bool `json:"stochastic"`
	// Optimize holds the inner-optimizer settings used by every acquisition
	// (zero value: the documented defaults of OptimizeSettings).
	Optimize OptimizeSettings `json:"optimize"`
}

// trustedFor returns the number of sampled maximizers to use for a batch of
// q points: Options.Trusted if positive, else max(5, q).
func (o Options) trustedFor(q int) int {
	if o.Trusted > 0 {
		return o.Trusted
	}
	return max(5, q)
}

// PathFeaturesOrDefault returns PathFeatures, or 1000 when it is not positive.
func (o Options) PathFeaturesOrDefault() int {
	if o.PathFeatures > 0 {
		return o.PathFeatures
	}
	return 1000
}

// optimizeSettingsOrDefault returns the inner-optimizer settings with the
// Stochastic switch applied.
func (o Options) optimizeSettingsOrDefault() OptimizeSettings {
	s := o.Optimize
	if o.Stochastic {
		s.Method = methodAdam
	}
	return s
}
