package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// dbBusyTimeout is how long the CLI waits for another process's lock on
// the study database before reporting it locked (writers hold it for
// milliseconds). Once a study runs, its writes retry for much longer
// (host.StorageOptions.BusyRetry's default, 5 min, logged at warn), so that a
// finished evaluation is not lost to another program holding the lock.
const dbBusyTimeout = 2 * time.Second

// Study Meta keys the CLI sets: the plugins directory and the objective's
// name in it (which may differ from the name in its Info).
const (
	metaPlugins   = "plugins"
	metaObjective = "objective"
)

// gpPriorHelp explains --gp-prior (run and bench).
const gpPriorHelp = `prior of the GP hyper-parameters: scaled (length-scales centred at
0.4·√(d/3) in unit-cube units, log-normal with σ = 0.7; signal variance
centred at 6 in standardized units) or weak (length-scales centred at 0.5,
σ = 1.5, signal variance at 1: the prior of the paper reproductions in
docs/results)`

// modelHelp explains --model.
var modelHelp = fmt.Sprintf(`GP surrogate: exact (one GP on every trial), local (a GP on the
--local-points trials nearest the best one, proposals inside their box: a
trust region for thousands of trials) or auto (exact below %d completed
trials, local from there on)`, host.LocalAutoMin)

// recommendHelp explains --recommend (run and bench).
const recommendHelp = `recommendation x̄ reported as best_x, best_value and regret:
  refine     the paper's x̄, the maximizer of the posterior mean over the whole
             space, for any objective; best_value is the noise-free f(x̄) when
             the objective has a noise-free evaluation, else the posterior
             mean at x̄ (and the regret null)
  evaluated  the evaluated point with the largest posterior mean, with its
             observed value (BoTorch's convention)
  auto       refine for objectives with a noise-free evaluation (all
             synthetic/* problems), else evaluated: an unevaluated x̄ has no
             observed value, and reporting one would take an extra
             evaluation outside the budget
`

// runFlags are the flags of 'run'.
type runFlags struct {
	common
	objective, acq, db, study string
	batchArg                  string // --batch: N or auto
	batch, iters              int
	autoBatch                 bool
	batchMax                  int
	minGain, relGain          float64
	init                      int
	initSet                   bool // --init given; else its default depends on the objective
	trusted, parallel         int
	seed                      uint64
	noiseVar                  float64
	params                    []string
	fix                       []string
	warmStart                 []string
	warmMode                  string
	retries                   int
	recommend                 string
	gpPrior                   string
	kernel                    string
	model                     string
	localPoints               int
	prune                     pruneFlags
	fidelity                  fidelityFlags
	refPoint                  []float64
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run --objective NAME [flags]",
		Short: "Start a new study and run it",
		Long: `Start a new study of an objective and run it: an initial Latin hypercube
design, then --iters BO iterations of --batch points each, evaluated in
parallel. Every trial is committed to the study database (--db) as soon as
it finishes; if the run is interrupted (Ctrl-C, SIGTERM, kill -9) continue
it with 'tesbo-host resume --db PATH --study NAME'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runNew(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.objective, "objective", "", "objective to optimize, e.g. synthetic/branin (see 'tesbo-host plugins')")
	fl.StringVar(&f.acq, "acq", host.DefaultAcquisition, "acquisition: tes tes-ep tes-sp ei pi ucb mes pes qei qei-cl bucb lp-ei ts random, or an acquisition plugin; for an objective of several outputs one of "+strings.Join(host.MultiAcquisitions(), " "))
	fl.StringVar(&f.batchArg, "batch", strconv.Itoa(host.DefaultBatch), batchFlagHelp())
	fl.IntVar(&f.batchMax, "batch-max", host.DefaultBatchMax, "with --batch auto: the largest batch (and, in worker mode, at most the idle evaluation slots); the budget is init + iters × batch-max evaluations")
	fl.Float64Var(&f.minGain, "batch-min-gain", acq.DefaultMinGain, "with --batch auto: one more point must add at least this information gain about the maximizer, in nats")
	fl.Float64Var(&f.relGain, "batch-rel-gain", acq.DefaultRelGain, "with --batch auto: one more point must add at least this fraction of the batch's information gain so far")
	fl.IntVar(&f.iters, "iters", host.DefaultIters, fmt.Sprintf("BO iterations after the initial design: the budget is init + iters × batch evaluations (with --batch auto, batch is --batch-max), at most %d trials", host.MaxTrials))
	// Default 0 is not shown by --help; the usage text states the real one.
	fl.IntVar(&f.init, "init", 0, "initial design size (default: the design the objective declares in its Info, 2 for synthetic/* objectives, else 10; at most the points of an integer space)")
	fl.IntVar(&f.trusted, "trusted", 0, fmt.Sprintf("number of trusted maximizers |X*| (default max(5, batch), at most %d)", host.MaxTrusted))
	fl.Uint64Var(&f.seed, "seed", 1, "study seed: the same seed gives the same trials")
	fl.Float64Var(&f.noiseVar, "noise-var", host.DefaultNoiseVar, "observation-noise variance benchmark objectives add (sent as param noise_var)")
	fl.StringVar(&f.db, "db", "tesbo.db", "study database: SQLite file (created if missing) or postgres:// URL (the study is then shared by workers, see 'tesbo-host worker')")
	fl.StringVar(&f.study, "study", "", "study name in the database (default OBJECTIVE-TIMESTAMP-RANDOM, e.g. synthetic/branin-20261124-181516-3fa2c1)")
	fl.IntVar(&f.parallel, "parallel", 0, "concurrent evaluations (default: batch)")
	fl.StringArrayVar(&f.params, "param", nil, "key=value passed to the objective (repeatable)")
	fl.StringArrayVar(&f.fix, "fix", nil, "NAME=VALUE: pin a parameter in every proposed point (repeatable; VALUE in native units, a categorical's choice by name); the model still uses every trial")
	fl.StringArrayVar(&f.warmStart, "warm-start", nil, "STUDY: start from the completed trials of an earlier study in the same --db (repeatable; parameters matched by name and kind, trials outside this space skipped)")
	fl.StringVar(&f.warmMode, "warm-start-mode", host.WarmObservations, "with --warm-start: observations (same objective: the trials are data; no initial design unless --init=N) or prior (the objective changed: the initial design opens with the old studies' best points)")
	fl.DurationVar(&f.evalTimeout, "eval-timeout", 0, "limit per evaluation attempt, e.g. 30s (0: none; 10s for objective scripts); a plugin past it is restarted")
	fl.IntVar(&f.retries, "retries", 0, fmt.Sprintf("retries of a failed evaluation, with exponential backoff from 500ms (at most %d)", host.MaxRetries))
	fl.StringVar(&f.recommend, "recommend", host.RecommendAuto, recommendHelp)
	fl.StringVar(&f.gpPrior, "gp-prior", host.PriorScaled, gpPriorHelp)
	fl.StringVar(&f.kernel, "kernel", host.DefaultKernel, "GP kernel: matern52 (the default) or se (the paper's squared exponential)")
	fl.StringVar(&f.model, "model", host.ModelAuto, modelHelp)
	fl.Float64SliceVar(&f.refPoint, "ref-point", nil, "for an objective of several outputs: the hypervolume's reference point, one native value per objective output in their declared order, e.g. 10,5 (default: the objective's, else the nadir of the observed Pareto front minus 10% of its range)")
	fl.IntVar(&f.localPoints, "local-points", 0, fmt.Sprintf("trials in the local model (default %d, at most %d)", host.DefaultLocalPoints, host.MaxLocalPoints))
	f.prune.register(cmd)
	f.fidelity.register(cmd)
	f.common.register(cmd, "plugins directory (default $TESBO_PLUGINS or ./plugins)")
	cmd.MarkFlagRequired("objective")
	return cmd
}

// parseBatch sets batch and autoBatch from --batch (a size or "auto",
// then sized up to --batch-max) and checks the gain thresholds.
func (f *runFlags) parseBatch() error {
	if f.batchArg == "auto" {
		f.autoBatch, f.batch = true, f.batchMax
		switch {
		case f.batchMax < 1:
			return usagef("bad --batch-max %d: must be ≥ 1", f.batchMax)
		case math.IsNaN(f.minGain) || math.IsInf(f.minGain, 0) || f.minGain < 0:
			return usagef("bad --batch-min-gain %v: must be a finite number ≥ 0 (nats)", f.minGain)
		case math.IsNaN(f.relGain) || math.IsInf(f.relGain, 0) || f.relGain < 0:
			return usagef("bad --batch-rel-gain %v: must be a finite number ≥ 0", f.relGain)
		}
		return nil
	}
	n, err := strconv.Atoi(f.batchArg)
	if err != nil || n < 1 {
		return usagef("bad --batch %q: want a size ≥ 1 or auto", f.batchArg)
	}
	f.batch = n
	return nil
}

// gainRule maps the --batch-*-gain flags onto acq.GainRule, where a zero
// threshold means the default and a negative one none.
func gainRule(minGain, relGain float64) acq.GainRule {
	r := acq.GainRule{MinGain: minGain, RelGain: relGain}
	if r.MinGain == 0 {
		r.MinGain = -1
	}
	if r.RelGain == 0 {
		r.RelGain = -1
	}
	return r
}

// validate checks flag values before anything is loaded or written.
func (f *runFlags) validate() (map[string]string, error) {
	switch {
	case f.objective == "":
		return nil, usagef("--objective is required (see 'tesbo-host plugins')")
	case f.parseBatch() != nil:
		return nil, f.parseBatch()
	case f.study != "" && checkStudyFlag(f.study) != nil:
		return nil, checkStudyFlag(f.study)
	case f.iters < 1:
		return nil, usagef("bad --iters %d: must be ≥ 1", f.iters)
	case f.initSet && f.init < 0:
		return nil, usagef("bad --init %d: must be ≥ 0", f.init)
	case f.trusted < 0:
		return nil, usagef("bad --trusted %d: must be ≥ 0", f.trusted)
	case f.parallel < 0:
		return nil, usagef("bad --parallel %d: must be ≥ 1", f.parallel)
	case math.IsNaN(f.noiseVar) || math.IsInf(f.noiseVar, 0) || f.noiseVar < 0:
		return nil, usagef("bad --noise-var %v: must be a finite number ≥ 0", f.noiseVar)
	case f.evalTimeout < 0:
		return nil, usagef("bad --eval-timeout %v: must be ≥ 0", f.evalTimeout)
	case f.retries < 0:
		return nil, usagef("bad --retries %d: must be ≥ 0", f.retries)
	case f.db == "":
		return nil, usagef("--db must not be empty")
	case f.gpPrior != host.PriorScaled && f.gpPrior != host.PriorWeak:
		return nil, usagef("bad --gp-prior %q: use %s or %s", f.gpPrior, host.PriorScaled, host.PriorWeak)
	case f.kernel != host.KernelMatern52 && f.kernel != host.KernelSE:
		return nil, usagef("bad --kernel %q: use %s or %s", f.kernel, host.KernelMatern52, host.KernelSE)
	case !host.ValidModel(f.model):
		return nil, usagef("bad --model %q: use %s, %s or %s", f.model, host.ModelAuto, host.ModelExact, host.ModelLocal)
	case f.localPoints < 0 || f.localPoints > host.MaxLocalPoints:
		return nil, usagef("bad --local-points %d: must be in [0, %d] (0: %d)", f.localPoints, host.MaxLocalPoints, host.DefaultLocalPoints)
	case len(f.warmStart) > host.MaxWarmStart:
		return nil, usagef("%d --warm-start studies, at most %d", len(f.warmStart), host.MaxWarmStart)
	case f.warmMode != host.WarmObservations && f.warmMode != host.WarmPrior:
		return nil, usagef("bad --warm-start-mode %q: use %s or %s", f.warmMode, host.WarmObservations, host.WarmPrior)
	case len(f.refPoint) > sdk.MaxObjectives:
		return nil, usagef("bad --ref-point: %d values, a study has at most %d objectives", len(f.refPoint), sdk.MaxObjectives)
	case !host.ValidRecommend(f.recommend):
		return nil, usagef("bad --recommend %q: use %s, %s or %s", f.recommend, host.RecommendAuto, host.RecommendEvaluated, host.RecommendRefine)
	}
	return parseRunParams(f.params)
}

// parseFix parses run's --fix NAME=VALUE flags: names non-empty and
// unique (the values are checked against the objective's space by host).
func parseFix(kvs []string) (map[string]string, error) {
	fix := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return nil, usagef("bad --fix %q: want NAME=VALUE", kv)
		}
		if _, dup := fix[k]; dup {
			return nil, usagef("bad --fix %q: %s given twice", kv, k)
		}
		fix[k] = v
	}
	return fix, nil
}

// parseRunParams parses run's --param key=value flags: keys non-empty and
// unique, noise_var and seed refused (they have their own flags).
func parseRunParams(kvs []string) (map[string]string, error) {
	params := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("bad --param %q: want key=value", kv)
		}
		if k == "noise_var" || k == "seed" {
			return nil, usagef("bad --param %q: %s is reserved, use --%s", kv, k, strings.ReplaceAll(k, "_", "-"))
		}
		if _, dup := params[k]; dup {
			return nil, usagef("bad --param %q: %s given twice", kv, k)
		}
		params[k] = v
	}
	return params, nil
}

func runNew(cmd *cobra.Command, f *runFlags) error {
	f.initSet = cmd.Flags().Changed("init")
	params, err := f.validate()
	if err != nil {
		return err
	}
	if err := checkFlagDeps(cmd.Flags().Changed, f); err != nil {
		return err
	}
	fix, err := parseFix(f.fix)
	if err != nil {
		return err
	}
	// Warm-started from observations, the imported trials are the design.
	noDesign := f.initSet && f.init == 0 || !f.initSet && len(f.warmStart) > 0 && f.warmMode == host.WarmObservations
	pruning, err := f.prune.pruning()
	if err != nil {
		return err
	}
	fidelity, err := f.fidelity.settings(pruning)
	if err != nil {
		return err
	}
	log, err := f.logger()
	if err != nil {
		return err
	}
	ctx, sig := signalContext(cmd.Context())
	defer sig.stop()

	dir := f.pluginsDir("")
	reg, err := openPlugins(ctx, &f.common, dir, log)
	if err != nil {
		return err
	}
	defer reg.Close()
	obj, err := loadObjective(ctx, reg, f.objective)
	if err != nil {
		return err
	}
	custom, err := resolveAcq(ctx, reg, f.acq)
	if err != nil {
		return err
	}
	absDir, _ := filepath.Abs(dir)
	var db *host.Storage
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	stored := storedPlugins{c: &f.common, log: log}
	defer stored.close()
	var out *output
	o, err := host.Start(ctx, host.Launch{
		Options: host.Options{
			Name: f.study, Acquisition: f.acq, RefPoint: f.refPoint, Proposer: custom.proposer, Suggester: custom.suggester,
			AcqOptions: acq.Options{Trusted: f.trusted},
			Batch:      f.batch, AutoBatch: f.autoBatch, BatchGain: gainRule(f.minGain, f.relGain),
			Iters: f.iters, Init: f.init, NoInit: noDesign, InitFromObjective: !f.initSet && !noDesign,
			WarmStart: f.warmStart, WarmStartMode: f.warmMode,
			Seed: f.seed, Parallel: f.parallel,
			NoiseVar: f.noiseVar, ZeroNoise: f.noiseVar == 0, Params: params,
			EvalTimeout: f.evalTimeout, Retries: f.retries,
			Recommend:     f.recommend,
			GPPrior:       f.gpPrior,
			Kernel:        f.kernel,
			Model:         f.model,
			LocalPoints:   f.localPoints,
			Pruning:       pruning,
			MultiFidelity: fidelity,
			Meta:          map[string]string{metaPlugins: absDir, metaObjective: f.objective},
			Logger:        log,
		},
		Objective: obj, ObjectiveName: f.objective, Fix: fix,
		// Only with every input checked does the database get touched.
		OpenDB: func(ctx context.Context) (*host.Storage, error) {
			if err := warmStartDBExists(f.db, f.warmStart); err != nil {
				return nil, err
			}
			db, err = openDB(ctx, sig, f.db, true, log)
			return db, err
		},
		Shared: host.IsPostgresURL(f.db),
		Worker: workerOptions(&f.common, f.parallel, 0, log),
		Load:   stored.load,
		OnStudy: func(s *host.Study) {
			out = newOutput(s, f.json, log)
			s.SetCallbacks(out.onIteration, out.onTrial)
		},
		Summarize: !f.json,
	})
	var exists *host.StudyExistsError
	if errors.As(err, &exists) {
		return usagef("study %q already exists in %s: continue it with 'tesbo-host resume --db %s --study %s' or choose another --study",
			exists.Name, host.Redact(f.db), shellQuote(host.Redact(f.db)), shellQuote(exists.Name))
	}
	return finish(ctx, sig, o, err, out, f.json, f.db, db)
}

// shellQuote quotes s for a POSIX shell when needed.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '+' || r == '=' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// warmStartDBExists refuses a warm start from a SQLite file that does not
// exist yet, before it is created: the studies it names would be in it,
// and a refused run must write nothing.
func warmStartDBExists(db string, from []string) error {
	if len(from) == 0 || host.IsPostgresURL(db) {
		return nil
	}
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return usagef("--warm-start %s: %s does not exist, so holds no study to start from (warm starts read studies of the same --db)", from[0], db)
	}
	return nil
}
