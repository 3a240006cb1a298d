package host

import (
	"crypto/rand"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
)

// Defaults of Options (also the CLI's defaults).
const (
	DefaultAcquisition = "tes"
	DefaultBatch       = 1
	// DefaultBatchMax is the largest batch of an AutoBatch study that
	// sets no Batch.
	DefaultBatchMax = 10
	DefaultIters    = 30
	DefaultInit     = 2
	DefaultNoiseVar = 1e-4
	DefaultGrace    = 10 * time.Second
	DefaultBackoff  = 500 * time.Millisecond
)

// DefaultObjectiveInit is the initial design of a study with
// InitFromObjective whose objective declares none (sdk.Info.InitialDesign
// 0): an objective of unknown cost and noise gets a design wide enough to
// fit a GP on.
const DefaultObjectiveInit = 10

// Recommendation modes (Options.Recommend). Every mode returns a maximizer
// of the GP posterior mean μ; they differ in where it is sought, which
// decides what best_value can be without spending evaluations.
const (
	// RecommendEvaluated takes x̄ as the evaluated point with the largest
	// posterior mean. It needs no extra objective evaluation, so best_value
	// is an observed value (the convention of BoTorch's runs in the
	// comparison of docs/results/README.md).
	RecommendEvaluated = "evaluated"
	// RecommendRefine is the paper's §5 rule for every objective: x̄ =
	// argmax μ over the whole cube (where the GP models the steps, as in a
	// multi-fidelity or curve-model study, μ at the last step), found by acq.Maximize with its best raw
	// samples and the best evaluated point as starts (the evaluated point is
	// kept when no search beats its mean). x̄ is then usually not evaluated,
	// so best_value is the objective's noise-free value there when it
	// implements sdk.NoiseFree, else the posterior mean in native units (an
	// estimate, and the regret is null: an observed f(x̄) would cost an
	// evaluation outside the study's budget). It also applies to a Study
	// driven by Ask/Tell.
	RecommendRefine = "refine"
	// RecommendAuto (the default) refines when the objective can be
	// evaluated without noise (sdk.NoiseFree: benchmarks, where f(x̄) costs
	// nothing and the paper's definition applies) and otherwise takes the
	// best evaluated point. The reason is what gets reported: an unevaluated
	// x̄ of a real-world objective has no observed value, and reporting one
	// (best_value, or the regret when f* is known) would need an extra,
	// noisy and possibly expensive evaluation there; the evaluated rule keeps
	// best_value an observed value. A Study driven by Ask/Tell
	// has no objective and so uses RecommendEvaluated; choose
	// RecommendRefine for the paper's x̄ there.
	//
	// Information-based acquisitions (TES, PES) deliberately query near,
	// not at, the trusted maximizers, so the evaluated-points rule can
	// understate how well they located x* (docs/results/README.md,
	// "Measurements behind the code").
	RecommendAuto = "auto"
)

// ValidRecommend reports whether mode is one of the recommendation modes
// (RecommendAuto, RecommendEvaluated, RecommendRefine).
func ValidRecommend(mode string) bool {
	return mode == RecommendAuto || mode == RecommendEvaluated || mode == RecommendRefine
}

// GP hyper-parameter priors (Options.GPPrior).
const (
	// PriorScaled is gp.ScaledPrior: length-scales centred at 0.4·√(d/3)
	// with a factor-2 standard deviation, signal variance centred at 6
	// (standardized outputs). The default.
	PriorScaled = "scaled"
	// PriorWeak is gp.DefaultPrior: length-scales centred at 0.5 with a
	// factor-4.5 standard deviation, the prior of the paper reproductions
	// in docs/results (and of studies stored before GPPrior existed).
	PriorWeak = "weak"
)

// DefaultKernel is the kernel of a study that names none: Matérn-5/2,
// whose rougher paths fit the functions users bring (narrow modes, kinks,
// outputs spanning decades) better than the squared exponential, which
// assumes infinitely smooth functions. Chosen under the held-out protocol
// of docs/results/broad (tuned on its tune half, judged on the held-out
// half). The paper's experiments use KernelSE and say so.
const DefaultKernel = KernelMatern52

// Kernel families (Options.Kernel).
const (
	KernelSE       = "se"       // squared exponential ARD, the paper's kernel
	KernelMatern52 = "matern52" // Matérn-5/2 ARD
)

// Options configure a study. Every zero field takes the documented default.
// The fields tagged json are stored with the study, so a resumed study runs
// with the same settings; the others are per process.
type Options struct {
	// Name identifies the study in DB. "" means DefaultStudyName.
	Name string `json:"-"`
	// RefPoint is the reference point of a study whose objective declares
	// several objective outputs: one native value per objective output,
	// in their order in sdk.Info.Outputs. It replaces the objective's
	// sdk.Info.RefPoint and is stored with the study's Info. nil: the
	// objective's, else derived (see Study.refPoint).
	RefPoint []float64 `json:"-"`
	// DB stores the study (trials, config, resume state): OpenStorage
	// or MemoryStorage. nil keeps the study in this Study value only.
	DB *Storage `json:"-"`

	// Acquisition is a name registered in package acq (acq.Names): tes
	// (the default: TES_ep that also evaluates the posterior-mean
	// maximizer x̄, see tes.Deliver), tes-ep and tes-sp (the paper's),
	// ei pi ucb mes pes qei qei-cl bucb lp-ei ts random. "" means tes.
	// What it can do (its largest batch, AutoBatch, worker mode) it
	// declares itself, see host/capabilities.go.
	Acquisition string `json:"acquisition"`
	// AcqOptions configure the acquisition (AcqOptions.Trusted is |X*|,
	// 0 means max(5, Batch)).
	AcqOptions acq.Options `json:"acq_options"`
	// Proposer, if non-nil, is used instead of looking Acquisition up (a
	// custom acquisition); Acquisition is then only its recorded name. A
	// study using one must be given the same Proposer when it is reopened.
	Proposer acq.Proposer `json:"-"`
	// Suggester, if non-nil, proposes every batch itself from the study's
	// history in native units (a batch-proposing plugin, sdk.Suggester),
	// with no GP fitted for it; Acquisition is then only its recorded
	// name. It excludes Proposer, declares no capability (no AutoBatch, no
	// worker mode) and, like a Proposer, must be given again when the
	// study is reopened.
	Suggester sdk.Suggester `json:"-"`

	// Batch is q, the number of points proposed per BO iteration (0 → 1;
	// with AutoBatch, the largest batch: 0 → DefaultBatchMax).
	Batch int `json:"batch"`
	// AutoBatch sizes every BO iteration's batch by information gain (the
	// TES paper's Appendix G): the batch grows one point at a time while
	// the extra point raises the batch's information gain α about x* by
	// at least BatchGain (see acq.GainRule: 0.02 nats and 5% of the gain
	// so far by default), up to Batch points (and, in worker mode, the idle
	// evaluation slots). It needs an acquisition that implements acq.Sizer:
	// tes, tes-ep, tes-sp. The budget is Init + Iters × Batch evaluations,
	// by one process or by workers, as for fixed batches: smaller batches
	// make more than Iters iterations, and the last batch is at most what
	// the budget has left.
	AutoBatch bool `json:"auto_batch,omitempty"`
	// BatchGain is AutoBatch's stopping rule (zero value: its defaults).
	BatchGain acq.GainRule `json:"batch_gain,omitzero"`
	// Iters is the number of BO iterations after the initial design (0 →
	// 30): the study's budget is Init + Iters × Batch evaluations (the one
	// budget rule of Run and of workers).
	Iters int `json:"iters"`
	// Init is the size of the initial Latin hypercube design (0 → 2, or
	// none when NoInit is set).
	Init int `json:"init"`
	// NoInit makes a zero Init mean no initial design instead of the
	// default (a positive Init still wins).
	NoInit bool `json:"no_init,omitempty"`
	// InitFromObjective makes a zero Init (without NoInit) mean the
	// design the objective asks for: its sdk.Info.InitialDesign, else
	// DefaultObjectiveInit, at most the points of an integer space. It is
	// resolved when the study is made (tesbo-host run without --init):
	// benchmark functions get the paper's 2 points, everything else 10.
	InitFromObjective bool `json:"-"`
	// Seed drives every random choice of the study.
	Seed uint64 `json:"-"`
	// Parallel is the number of concurrent evaluations (0 → Batch).
	Parallel int `json:"parallel"`

	// NoiseVar is the observation-noise variance benchmark objectives add
	// (sent to sdk.Configurable objectives as "noise_var"; 0 → 1e-4, the
	// paper's σ_n²; set ZeroNoise for none — a negative value, which older
	// callers passed for none, is taken as ZeroNoise). The GP infers its
	// own noise unless FixNoise is set.
	NoiseVar float64 `json:"noise_var"`
	// ZeroNoise makes the objectives noise-free: NoiseVar is 0.
	ZeroNoise bool `json:"zero_noise,omitempty"`
	// FixNoise fixes the GP's noise variance at NoiseVar (scaled to
	// standardized units) instead of inferring it.
	FixNoise bool `json:"fix_noise,omitempty"`
	// Params are the objective's run parameters (--param key=value), passed
	// to sdk.Configurable objectives with "noise_var" and "seed" added.
	Params map[string]string `json:"params,omitempty"`
	// Kernel is the GP kernel family: KernelMatern52 (DefaultKernel) or
	// KernelSE (the paper's).
	Kernel string `json:"kernel"`
	// GPPrior is the prior of the GP's hyper-parameters: PriorScaled
	// (default) or PriorWeak.
	GPPrior string `json:"gp_prior,omitempty"`
	// Model is the surrogate: ModelAuto (default; exact below
	// LocalAutoMin completed trials, local from there on), ModelExact or
	// ModelLocal (an exact GP on the trials in a trust region around the
	// best one, proposals inside it; see gp.LocalData).
	Model string `json:"model,omitempty"`
	// LocalPoints is the local model's number of trials (the nearest to
	// the best one, ties included); 0 means DefaultLocalPoints, at most
	// MaxLocalPoints.
	LocalPoints int `json:"local_points,omitempty"`
	// Recommend is RecommendAuto (default), RecommendEvaluated or
	// RecommendRefine.
	Recommend string `json:"recommend"`
	// Pruning stops evaluations early from their intermediate values
	// (zero: never).
	Pruning Pruning `json:"pruning,omitzero"`
	// MultiFidelity makes the study multi-fidelity: the acquisition
	// chooses the step each evaluation runs to (zero: every evaluation
	// runs to its end).
	MultiFidelity MultiFidelity `json:"multi_fidelity,omitzero"`

	// EvalTimeout bounds one evaluation attempt (0: no limit). For an
	// objective that bounds its evaluations itself once it is ready to
	// evaluate (a plugin loaded by host/loader with the same or a shorter
	// limit), the host adds the objective's start-up allowance, so that
	// restarting a plugin process does not count against the evaluation.
	EvalTimeout time.Duration `json:"eval_timeout"`
	// Retries is how many times a failed evaluation is retried.
	Retries int `json:"retries"`
	// RetryBackoff is the wait before the first retry, doubling for each
	// further one up to 30 s (0 → 500 ms).
	RetryBackoff time.Duration `json:"retry_backoff"`

	// Fixed pins parameters (native values by name; a Categorical by its
	// choice's index) in every point the study proposes, while the model
	// uses every trial (pin.go). Stored, so a resumed study keeps them.
	Fixed map[string]float64 `json:"fixed,omitempty"`
	// WarmStart names earlier studies in DB whose completed trials start
	// this study (at most MaxWarmStart), as WarmStartMode says: as
	// observations (WarmObservations, the default) or as a prior on where
	// to look (WarmPrior); see warmstart.go. Read when the study is
	// created; what was imported is stored with it.
	WarmStart     []string `json:"warm_start,omitempty"`
	WarmStartMode string   `json:"warm_start_mode,omitempty"`
	// warmPoints are WarmPrior's design points (native units), read from
	// the source studies when the study is created and stored with it.
	warmPoints [][]float64

	// Meta is free-form data stored with the study (the CLI keeps its
	// plugins directory here).
	Meta map[string]string `json:"meta,omitempty"`

	// Grace is how long in-flight evaluations may still finish (and be
	// recorded) after the context is cancelled (0 → 10 s; a negative
	// Grace, kept as it is by Normalized, means none).
	Grace time.Duration `json:"-"`
	// OnIteration is called after every BO iteration with its record, from
	// the goroutine running the study.
	OnIteration func(Record) `json:"-"`
	// OnTrial is called after every finished evaluation.
	OnTrial func(Trial) `json:"-"`
	// Logger receives the study's logs, the acquisition's included (it is
	// passed on as acq.State.Log; TES logs a debug summary per iteration).
	// Zero value: discard — nothing in tesbo logs through zerolog's global
	// logger.
	Logger zerolog.Logger `json:"-"`
}

// DefaultStudyName names a study of objective started at now when the
// caller gives no name: "<objective>-<UTC time to the second>-<6 random hex
// digits>". The random suffix keeps two studies started in the same second
// (two processes sharing a database) apart; it is drawn from crypto/rand,
// not the study seed, which the name does not affect.
func DefaultStudyName(objective string, now time.Time) string {
	var b [3]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	suffix := fmt.Sprintf("-%s-%x", now.UTC().Format("20060102-150405"), b)
	// Keep within MaxStudyName, cutting a long objective name at a rune.
	for len(objective)+len(suffix) > MaxStudyName {
		_, n := utf8.DecodeLastRuneInString(objective)
		objective = objective[:len(objective)-n]
	}
	return objective + suffix
}

// DefaultOptions returns the options every zero field of Options stands
// for: Options{}.Normalized().
func DefaultOptions() Options { return Options{}.Normalized() }

// Normalized returns o with every zero field replaced by its default and
// the legacy stand-ins resolved: a negative NoiseVar means ZeroNoise, and
// ZeroNoise sets NoiseVar to 0. It is idempotent:
// o.Normalized().Normalized() == o.Normalized() for every o, so options
// that went through it once (a study's Settings, stored settings) can be
// passed through it again without changing their meaning.
func (o Options) Normalized() Options {
	if o.Acquisition == "" {
		o.Acquisition = DefaultAcquisition
	}
	if o.Batch == 0 {
		o.Batch = DefaultBatch
		if o.AutoBatch {
			o.Batch = DefaultBatchMax
		}
	}
	if o.Iters == 0 {
		o.Iters = DefaultIters
	}
	if o.Init == 0 && !o.NoInit && !o.InitFromObjective {
		o.Init = DefaultInit
	}
	if o.Parallel == 0 {
		o.Parallel = o.Batch
	}
	o.NoiseVar, o.ZeroNoise = normalNoise(o.NoiseVar, o.ZeroNoise)
	if o.Kernel == "" {
		o.Kernel = DefaultKernel
	}
	if o.Model == "" {
		o.Model = ModelAuto
	}
	if o.GPPrior == "" {
		o.GPPrior = PriorScaled
	}
	if o.Recommend == "" {
		o.Recommend = RecommendAuto
	}
	if o.RetryBackoff == 0 {
		o.RetryBackoff = DefaultBackoff
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if len(o.WarmStart) > 0 && o.WarmStartMode == "" {
		o.WarmStartMode = WarmObservations
	}
	o.Pruning = o.Pruning.normalized()
	return o
}

// normalNoise resolves (NoiseVar, ZeroNoise): ZeroNoise or a negative
// variance (the stand-in older callers pass) is a noise-free study with
// variance 0; otherwise 0 is the default. NaN and ±Inf are kept for
// validate to refuse.
func normalNoise(v float64, zero bool) (float64, bool) {
	switch {
	case zero || v < 0:
		return 0, true
	case v == 0:
		return DefaultNoiseVar, false
	}
	return v, false
}

// Stored returns the fields of o that a study stores (per-process fields
// zeroed: Name, DB, Proposer, Suggester, Seed, Grace, callbacks, Logger),
// after Normalized. Two studies whose Stored options are equal run with the same
// settings.
func (o Options) Stored() Options {
	o = o.Normalized()
	o.Name, o.DB, o.Proposer, o.Suggester, o.Seed, o.Grace = "", nil, nil, nil, 0, 0
	o.OnIteration, o.OnTrial, o.Logger = nil, nil, zerolog.Logger{}
	return o
}

// Validate reports the first option of o.Normalized() that is out of
// range or unknown, as NewStudy would refuse it. Studies validate their
// options once, when they are made (NewStudy, OpenStudy, Start).
func (o Options) Validate() error { return o.Normalized().validate() }

// validate checks option values (after Normalized).
func (o Options) validate() error {
	switch {
	case o.Batch < 1:
		return fmt.Errorf("batch must be ≥ 1, got %d", o.Batch)
	case o.Iters < 0:
		return fmt.Errorf("iters must be ≥ 0, got %d", o.Iters)
	case o.Init < 0:
		return fmt.Errorf("init must be ≥ 0, got %d", o.Init)
	case o.Parallel < 1:
		return fmt.Errorf("parallel must be ≥ 1, got %d", o.Parallel)
	case math.IsNaN(o.NoiseVar) || math.IsInf(o.NoiseVar, 0):
		return fmt.Errorf("noise variance must be finite, got %v", o.NoiseVar)
	case o.EvalTimeout < 0:
		return fmt.Errorf("eval timeout must be ≥ 0, got %v", o.EvalTimeout)
	case o.Retries < 0:
		return fmt.Errorf("retries must be ≥ 0, got %d", o.Retries)
	case o.AcqOptions.Trusted < 0:
		return fmt.Errorf("trusted must be ≥ 0, got %d", o.AcqOptions.Trusted)
	case o.Proposer != nil && o.Suggester != nil:
		return fmt.Errorf("acquisition %s: give a Proposer or a Suggester, not both", o.Acquisition)
	}
	if err := o.checkLimits(); err != nil {
		return err
	}
	if err := o.checkAutoBatch(); err != nil {
		return err
	}
	if err := o.checkWarmStart(); err != nil {
		return err
	}
	if o.Kernel != KernelSE && o.Kernel != KernelMatern52 {
		return fmt.Errorf("unknown kernel %q: known ones are %s, %s", o.Kernel, KernelSE, KernelMatern52)
	}
	if !ValidModel(o.Model) {
		return fmt.Errorf("unknown model %q: known ones are %s, %s, %s", o.Model, ModelAuto, ModelExact, ModelLocal)
	}
	if o.LocalPoints < 0 || o.LocalPoints > MaxLocalPoints {
		return fmt.Errorf("local model size %d outside [0, %d] (0: the default %d)", o.LocalPoints, MaxLocalPoints, DefaultLocalPoints)
	}
	if o.GPPrior != PriorScaled && o.GPPrior != PriorWeak {
		return fmt.Errorf("unknown GP prior %q: known ones are %s, %s", o.GPPrior, PriorScaled, PriorWeak)
	}
	if !ValidRecommend(o.Recommend) {
		return fmt.Errorf("unknown recommendation mode %q: known ones are %s, %s, %s", o.Recommend, RecommendAuto, RecommendEvaluated, RecommendRefine)
	}
	if err := o.MultiFidelity.validate(o); err != nil {
		return err
	}
	if err := o.Pruning.validate(); err != nil {
		return err
	}
	if o.Pruning.Model == PruneModelCurve && o.Model == ModelLocal {
		return fmt.Errorf("the pruner's curve model fits the exact GP: run it without the local model")
	}
	for k := range o.Params {
		if k == "noise_var" || k == "seed" {
			return fmt.Errorf("param %q is reserved (set it with the noise-var/seed options)", k)
		}
	}
	return nil
}
