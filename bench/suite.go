package bench

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems"
	"github.com/tesbo/tesbo/problems/usersuite"
	"github.com/tesbo/tesbo/sdk"
)

// Defaults of Suite.
const (
	DefaultIters = 30
	DefaultInit  = 2 // the paper's §5: "initialized with 2 data samples"
	defaultSeeds = 1
	defaultJobs  = 1
)

// Suite is a benchmark: every combination of Problems × Acquisitions ×
// Batches × Seeds run for Iters BO iterations. Zero fields take the documented
// defaults.
type Suite struct {
	// Problems are the objectives to optimize (at least one).
	Problems []Problem
	// Acquisitions are registered acquisition names (acq.Names).
	Acquisitions []string
	// Batches are the batch sizes |B| (nil → [1]).
	Batches []int
	// Seeds is the number of runs per combination (0 → 1).
	Seeds int
	// Iters is the number of BO iterations per run (0 → 30).
	Iters int
	// Init is the initial design size (0 → 2; negative → none). With
	// InitAtLeastBatch the design has max(Init, |B|) points: 2 for |B| = 1
	// and |B| for |B| > 1 (the BoTorch protocol of docs/results/README.md).
	Init             int
	InitAtLeastBatch bool
	// NoiseVar is the observation-noise variance (0 → 1e-4, the paper's;
	// negative → noise-free); a problem's noise_var parameter overrides it.
	NoiseVar float64
	// FixNoise fixes the GP's noise variance at the true one instead of
	// inferring it.
	FixNoise bool
	// Trusted is |X*| for TES (and the x* samples of PES); 0 → max(5, |B|).
	Trusted int
	// UCBBeta is UCB/BUCB's fixed β (0 → the GP-UCB schedule).
	UCBBeta float64
	// Kernel is host.KernelSE (default, the paper's) or host.KernelMatern52.
	Kernel string
	// GPPrior is the GP hyper-parameter prior: host.PriorScaled (default)
	// or host.PriorWeak (the paper reproductions').
	GPPrior string
	// Recommend is host.RecommendAuto (default: refine for the synthetic
	// problems), host.RecommendEvaluated or host.RecommendRefine.
	Recommend string
	// Model is the GP surrogate, as host.Options.Model ("" → host.ModelAuto:
	// exact below host.LocalAutoMin trials); LocalPoints the local model's
	// size (0 → host.DefaultLocalPoints).
	Model       string
	LocalPoints int
	// Params are run parameters for every problem that accepts them.
	Params map[string]string
	// SeedByAcq mixes the acquisition into the run seeds (see Seed).
	SeedByAcq bool
	// Jobs is the number of runs in parallel (0 → 1). Each run's inner
	// optimizer then uses max(1, GOMAXPROCS/Jobs) goroutines.
	Jobs int
	// Out is the output directory (required; created if missing).
	Out string
	// Open opens a run's objective (nil → Synthetic).
	Open opener
	// Logger gets one line per finished run; the studies log to it at warn
	// level (debug when it is at debug level).
	Logger zerolog.Logger
	// Command is the command line, recorded in summary.md.
	Command string
	// EvalTimeout bounds one evaluation (0: none).
	EvalTimeout time.Duration
}

// opener returns a fresh objective for one run. Runs of an objective
// reported exclusive (one shared instance, e.g. a plugin process) never
// overlap; non-exclusive objectives must be independent per call.
type opener func(ctx context.Context, name string) (obj sdk.Objective, exclusive bool, err error)

// Synthetic opens the built-in problems (problems.New): synthetic/<name>
// objectives, the user suite's user/<name> and the mixed suite's
// mixed/<name>, a new instance per run.
func Synthetic(_ context.Context, name string) (sdk.Objective, bool, error) {
	o, err := problems.New(name)
	return o, false, err
}

func (s *Suite) seeds() int { return max(s.Seeds, defaultSeeds) }
func (s *Suite) iters() int { return cmp.Or(s.Iters, DefaultIters) }
func (s *Suite) jobs() int  { return max(s.Jobs, defaultJobs) }
func (s *Suite) opener() opener {
	if s.Open == nil {
		return Synthetic
	}
	return s.Open
}

func (s *Suite) batches() []int {
	if len(s.Batches) == 0 {
		return []int{1}
	}
	return s.Batches
}

// UserProblems is the user suite (package problems/usersuite) with each
// problem's default budget.
func UserProblems() []Problem {
	var out []Problem
	for _, p := range usersuite.Problems() {
		out = append(out, Problem{Name: usersuite.Prefix + p.Name, Init: p.Init, Iters: p.Iters})
	}
	return out
}

// itersOf is the number of BO iterations of problem p's runs.
func (s *Suite) itersOf(p Problem) int { return cmp.Or(p.Iters, s.iters()) }

// itersOfLabel is itersOf for the problem with that label (the suite's
// iterations for a label it does not hold).
func (s *Suite) itersOfLabel(label string) int {
	for _, p := range s.Problems {
		if p.Label() == label {
			return s.itersOf(p)
		}
	}
	return s.iters()
}

// initOf is the initial design size of problem p's runs at batch size q
// (0: none).
func (s *Suite) initOf(p Problem, q int) int {
	if p.Init <= 0 {
		return s.initFor(q)
	}
	if s.InitAtLeastBatch {
		return max(p.Init, q)
	}
	return p.Init
}

// initFor is the initial design size for batch size q (0: none).
func (s *Suite) initFor(q int) int {
	n := s.Init
	switch {
	case n == 0:
		n = DefaultInit
	case n < 0:
		n = 0
	}
	if s.InitAtLeastBatch {
		n = max(n, q)
	}
	return n
}

// validate checks the suite before anything runs.
// Bounds on a suite's sizes, so that a mistyped number is refused instead
// of exhausting the machine (each run's own sizes are bounded by host's
// Max* limits, checked here too so that no run starts).
const (
	// maxSeeds bounds Suite.Seeds.
	maxSeeds = 1000
	// maxJobs bounds Suite.Jobs: runs in parallel, each with its own GP.
	maxJobs = 256
	// maxRuns bounds problems × acquisitions × batches × seeds.
	maxRuns = 100000
)

func (s *Suite) validate() error {
	switch {
	case len(s.Problems) == 0:
		return fmt.Errorf("no problems given")
	case len(s.Acquisitions) == 0:
		return fmt.Errorf("no acquisitions given")
	case s.Seeds < 0:
		return fmt.Errorf("seeds must be ≥ 1, got %d", s.Seeds)
	case s.Iters < 0:
		return fmt.Errorf("iters must be ≥ 1, got %d", s.Iters)
	case s.Jobs < 0:
		return fmt.Errorf("jobs must be ≥ 1, got %d", s.Jobs)
	case s.Trusted < 0:
		return fmt.Errorf("trusted must be ≥ 0, got %d", s.Trusted)
	case math.IsNaN(s.NoiseVar) || math.IsInf(s.NoiseVar, 0):
		return fmt.Errorf("noise variance must be finite, got %v", s.NoiseVar)
	case math.IsNaN(s.UCBBeta) || s.UCBBeta < 0 || math.IsInf(s.UCBBeta, 0):
		return fmt.Errorf("UCB β must be a finite number ≥ 0, got %v", s.UCBBeta)
	case s.Out == "":
		return fmt.Errorf("no output directory given")
	case s.Seeds > maxSeeds:
		return fmt.Errorf("%d seeds exceed the limit of %d (MaxSeeds)", s.Seeds, maxSeeds)
	case s.Jobs > maxJobs:
		return fmt.Errorf("%d jobs exceed the limit of %d (MaxJobs)", s.Jobs, maxJobs)
	case s.Iters > host.MaxTrials:
		return fmt.Errorf("%d iterations exceed the limit of %d trials a study may have (host.MaxTrials)", s.Iters, host.MaxTrials)
	}
	if n := len(s.Problems) * len(s.Acquisitions) * len(s.batches()) * s.seeds(); n > maxRuns {
		return fmt.Errorf("%d runs (problems × acquisitions × batch sizes × seeds) exceed the limit of %d (MaxRuns)", n, maxRuns)
	}
	for _, q := range s.batches() {
		if q < 1 || q > host.MaxBatch {
			return fmt.Errorf("batch sizes must be between 1 and %d (host.MaxBatch), got %d", host.MaxBatch, q)
		}
	}
	if dup := firstDup(s.batches()); dup != "" {
		return fmt.Errorf("batch size %s given twice", dup)
	}
	known := acq.Names()
	for _, a := range s.Acquisitions {
		if !slices.Contains(known, a) {
			return fmt.Errorf("unknown acquisition %q: valid ones are %s", a, strings.Join(known, ", "))
		}
	}
	if dup := firstDup(s.Acquisitions); dup != "" {
		return fmt.Errorf("acquisition %s given twice", dup)
	}
	labels := make([]string, len(s.Problems))
	for i, p := range s.Problems {
		labels[i] = p.Label()
		if p.Init < 0 || p.Iters < 0 {
			return fmt.Errorf("problem %s: initial design %d and iterations %d must be ≥ 0 (0: the suite's)", p.Label(), p.Init, p.Iters)
		}
		if v, ok := p.Params[KeyNoiseVar]; ok {
			if _, err := parseNoiseVar(v); err != nil {
				return fmt.Errorf("problem %s: %w", p.Label(), err)
			}
		}
	}
	if dup := firstDup(labels); dup != "" {
		return fmt.Errorf("problem %s given twice", dup)
	}
	for k, v := range s.Params {
		if k == "" || k == "seed" {
			return fmt.Errorf("bad parameter %q: the key must be non-empty and not the reserved 'seed'", k+"="+v)
		}
		if k == KeyNoiseVar {
			return fmt.Errorf("noise_var is not a parameter: set the suite's noise variance (--noise-var), or per problem as name:noise_var=V")
		}
	}
	switch s.GPPrior {
	case "", host.PriorScaled, host.PriorWeak:
	default:
		return fmt.Errorf("unknown GP prior %q: use %s or %s", s.GPPrior, host.PriorScaled, host.PriorWeak)
	}
	switch s.Kernel {
	case "", host.KernelSE, host.KernelMatern52:
	default:
		return fmt.Errorf("unknown kernel %q: use %s or %s", s.Kernel, host.KernelSE, host.KernelMatern52)
	}
	if s.Model != "" && !host.ValidModel(s.Model) {
		return fmt.Errorf("unknown model %q: use %s, %s or %s", s.Model, host.ModelAuto, host.ModelExact, host.ModelLocal)
	}
	if s.LocalPoints < 0 || s.LocalPoints > host.MaxLocalPoints {
		return fmt.Errorf("local model size %d outside [0, %d] (0: the default %d)", s.LocalPoints, host.MaxLocalPoints, host.DefaultLocalPoints)
	}
	if s.Recommend != "" && !host.ValidRecommend(s.Recommend) {
		return fmt.Errorf("unknown recommendation %q: use %s, %s or %s", s.Recommend, host.RecommendAuto, host.RecommendEvaluated, host.RecommendRefine)
	}
	return nil
}

func firstDup[T comparable](xs []T) string {
	seen := map[T]bool{}
	for _, x := range xs {
		if seen[x] {
			return fmt.Sprint(x)
		}
		seen[x] = true
	}
	return ""
}

// acqOptions are the acquisition options of every run; the inner optimizer
// shares the cores with the other jobs.
func (s *Suite) acqOptions() acq.Options {
	o := acq.Options{Trusted: s.Trusted, UCBBeta: s.UCBBeta}
	o.Optimize.Workers = max(1, runtime.GOMAXPROCS(0)/s.jobs())
	return o
}
