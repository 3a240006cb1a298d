package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/bench"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/host/loader"
	"github.com/tesbo/tesbo/problems/mixedsuite"
	"github.com/tesbo/tesbo/problems/usersuite"
	"github.com/tesbo/tesbo/sdk"
)

// benchFlags are the flags of 'bench'.
type benchFlags struct {
	common
	problems, acqs, batches []string
	suiteName               string
	params                  []string
	seeds, iters, init      int
	initBatch               bool
	trusted, jobs           int
	noiseVar, ucbBeta       float64
	fixNoise, seedByAcq     bool
	kernel, recommend, out  string
	model                   string
	localPoints             int
	gpPrior                 string
	appG                    bool
	half                    string
	bbobDims, bbobInsts     []string
	list                    bool
	// changed reports whether a flag was given (the user suite keeps its
	// per-problem budgets unless --iters or --init are).
	changed func(name string) bool
}

// benchLong is the help text of bench.
const benchLong = `Run every combination of --problems × --acqs × --batch × --seeds through the
same BO loop as 'run' (in-process, --jobs runs at a time) and write to --out:

  studies.db   every run as a study (resumable)
  runs.csv     one row per run × BO iteration: problem, acquisition, batch,
               seed, study_seed, iteration, evaluations, regret (noise-free
               f* − f(x̄)), log10_regret, best_value, fit_s, propose_s,
               eval_s, fallback, best_eval_regret (the user's rule: the
               noise-free regret of the best evaluated trial so far),
               best_true_regret (the smallest noise-free regret so far).
               On the several-output problems (synthetic/branincurrin,
               synthetic/speedreducer, ...) regret and best_eval_regret are
               the hypervolume regret max HV − HV of the evaluated Pareto
               set (or the regret of the best feasible trial), and
               best_true_regret that of every evaluated trial
  summary.md   per problem and batch size: mean, standard error and median of
               log10 final regret, median propose/fit seconds, runs; wall time
  regret_<problem>_q<B>.png  median log10 immediate regret per iteration,
               one line per acquisition with its quartiles shaded (as paper Fig. 5/6)
  box_<problem>_q<B>.png     box plots of the final regret (paper App. H)
  comparison.md  (with several --acqs) the methods compared under the user's
               rule — the noise-free regret of the best evaluated trial — per
               problem (median, bootstrap SE, ratio to the best), wins/ties/
               losses, and the default acquisition's quality targets
  bench.json   the invocations on this directory (total wall time)

Interrupted (Ctrl-C, SIGTERM, kill -9)? Run the same command again: finished
runs are skipped, partial ones resume with their evaluations kept. A run that
fails is recorded, not fatal: the others go on, the outputs are written, the
failure is listed in summary.md (and logged on stderr), and the next
invocation retries it.

Progress: one log line per finished run on stderr ("run finished", with the
problem, acquisition, batch, seed, status, iterations, final log10 regret and
median propose time; JSON unless stderr is a terminal); a one-line count of
runs on stdout at the end.

Exit status: 0 when every run is complete; 1 when any run failed (reported
after all runs have finished and the outputs are written); 2 for bad input
(nothing is run or written), among it an --out holding this suite's runs
made with other settings (the error names them: use another --out, or the
settings they were made with); 130/143 when interrupted by SIGINT/SIGTERM
(resumable as above).

Problems are objective names with optional parameters after colons:
  synthetic/branin  synthetic/hartmann3  synthetic/gpsample:sample_seed=3
  synthetic/ackley:dim=5  synthetic/log10p:noise_var=2.511e-2
--param KEY=VALUE applies to every problem that accepts KEY (e.g.
--param data=/path/to/brooms-barn for synthetic/log10p); noise_var as a
problem parameter sets that problem's observation noise instead of --noise-var.
--suite user runs the user suite: 16 objectives of the kinds users bring
(user/bumps2, user/hpo4, user/fail4, ...; see problems/usersuite), with known
optima, each with its own budget: 2d initial points (at least 6) and 25 BO
iterations for d ≤ 3, 35 for d ≤ 6, 45 beyond; --init and --iters, when
given, apply to every problem instead. synthetic/* and user/* problems run
in-process; other names are loaded from --plugins (runs of one plugin
objective then run one at a time).

Seeds: run i of (problem, batch) gets a study seed hashed from (problem, batch,
i), shared by all acquisitions (common random numbers: same initial design and
noise), unless --seed-by-acq.

--appg computes the paper's Appendix G diagnostic instead: for each problem
and seed, fit the GP on --init Latin-hypercube points, build one TES_ep model
with |X*| = --trusted (default 5) and maximize α for every --batch size
(e.g. --batch 1-10); writes appg.csv, appg.md and appg_<problem>.png.

Examples:
  tesbo-host bench --problems synthetic/branin --acqs ei,random --seeds 1 --iters 3 --out /tmp/smoke
  tesbo-host bench --problems synthetic/gpsample --acqs tes-ep,tes-sp,ei,ucb,mes,pes \
      --seeds 10 --iters 50 --jobs 2 --out results/fig5a`

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench --problems a,b --acqs x,y --seeds N --iters N [--batch N] --out DIR",
		Short: "Run benchmark suites (every problem × acquisition × batch × seed) and write their results",
		Long:  benchLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.changed = cmd.Flags().Changed
			return runBench(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.problems, "problems", nil, "problems, comma-separated or repeated: NAME[:key=value...] (see above)")
	fl.StringVar(&f.suiteName, "suite", "", "a predefined problem set instead of --problems: user (the user suite, user/*), mixed (categorical parameters, mixed/*, with their one-hot variants) or broad (see above)")
	fl.StringVar(&f.half, "half", "", "keep only the problems of one half of the held-out protocol: tune or held-out (docs/results/broad/SPLIT.md)")
	fl.StringSliceVar(&f.bbobDims, "bbob-dims", nil, "with --suite broad: the BBOB dimensions, comma-separated (default 2,5)")
	fl.StringSliceVar(&f.bbobInsts, "bbob-instances", nil, "with --suite broad: the BBOB instances, numbers or ranges in 1-15 (default 1,6: one per half; all: 1-15)")
	fl.BoolVar(&f.list, "list", false, "print the problems (label, half, init, iters; tab-separated) and exit without running (--out and --acqs not needed)")
	fl.StringSliceVar(&f.acqs, "acqs", nil, "acquisitions, comma-separated: tes tes-ep tes-sp ei pi ucb mes pes qei qei-cl bucb lp-ei ts random")
	fl.StringSliceVar(&f.batches, "batch", []string{"1"}, "batch sizes |B|, comma-separated numbers or ranges (1,3,10-12)")
	fl.IntVar(&f.seeds, "seeds", 1, "runs (seeds) per problem × acquisition × batch")
	fl.IntVar(&f.iters, "iters", bench.DefaultIters, "BO iterations per run after the initial design")
	fl.IntVar(&f.init, "init", bench.DefaultInit, "initial design size (Latin hypercube; 0: none). With --appg: the data the GP is fitted on")
	fl.BoolVar(&f.initBatch, "init-batch", false, "use max(--init, |B|) initial points (BoTorch's protocol: 2 for |B| = 1, |B| otherwise)")
	fl.Float64Var(&f.noiseVar, "noise-var", host.DefaultNoiseVar, "observation-noise variance σ_n² added by benchmark objectives (0: noise-free)")
	fl.BoolVar(&f.fixNoise, "fix-noise", false, "fix the GP's noise variance at the true σ_n² instead of inferring it")
	fl.IntVar(&f.trusted, "trusted", 0, "|X*| for TES, x* samples for PES (default max(5, |B|); 5 with --appg)")
	fl.Float64Var(&f.ucbBeta, "ucb-beta", 0, "fixed β of UCB/BUCB, α = μ + √β σ (0: the GP-UCB schedule; the BoTorch comparison uses 2)")
	fl.StringVar(&f.kernel, "kernel", host.DefaultKernel, "GP kernel: matern52 (the default) or se (the paper's, which its reproductions in docs/results pass)")
	fl.StringVar(&f.gpPrior, "gp-prior", host.PriorScaled, gpPriorHelp)
	fl.StringVar(&f.recommend, "recommend", host.RecommendAuto, recommendHelp)
	fl.StringVar(&f.model, "model", host.ModelAuto, modelHelp)
	fl.IntVar(&f.localPoints, "local-points", 0, fmt.Sprintf("trials in the local model (default %d, at most %d)", host.DefaultLocalPoints, host.MaxLocalPoints))
	fl.StringArrayVar(&f.params, "param", nil, "KEY=VALUE for every problem that accepts KEY (repeatable)")
	fl.BoolVar(&f.seedByAcq, "seed-by-acq", false, "derive run seeds from the acquisition too (no common random numbers)")
	fl.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "runs in parallel; each run's acquisition optimizer then uses max(1, cores/jobs) threads")
	fl.StringVar(&f.out, "out", "", "output directory (created; reuse it to resume)")
	fl.BoolVar(&f.appG, "appg", false, "compute the Appendix G diagnostic (maximized TES_ep vs --batch) instead of running studies")
	fl.DurationVar(&f.evalTimeout, "eval-timeout", 0, "limit per evaluation attempt (0: none)")
	fl.StringVar(&f.plugins, "plugins", "", "plugins directory for non-synthetic problems (default $TESBO_PLUGINS or ./plugins)")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level on stderr: debug, info (one line per finished run), warn, error")
	fl.BoolVar(&f.unrestricted, "unrestricted", false, "give Yaegi objective scripts the whole standard library")
	fl.StringArrayVar(&f.envAllow, "plugin-env", nil, pluginEnvHelp)
	fl.StringVar(&f.pluginMemory, "plugin-memory", "", pluginMemoryHelp)
	return cmd
}

// suite checks the flags and builds the suite (without Open and Logger).
func (f *benchFlags) suite() (bench.Suite, error) {
	s := bench.Suite{
		Seeds: f.seeds, Iters: f.iters, Init: f.init, InitAtLeastBatch: f.initBatch,
		NoiseVar: f.noiseVar, FixNoise: f.fixNoise, Trusted: f.trusted, UCBBeta: f.ucbBeta,
		Kernel: f.kernel, GPPrior: f.gpPrior, Recommend: f.recommend, SeedByAcq: f.seedByAcq, Jobs: f.jobs,
		Model: f.model, LocalPoints: f.localPoints,
		Out: f.out, EvalTimeout: f.evalTimeout,
	}
	switch f.suiteName {
	case "":
	case "user":
		if len(f.problems) > 0 {
			return s, usagef("--suite and --problems exclude each other")
		}
		f.problems = usersuite.Names()
	case "mixed":
		if len(f.problems) > 0 {
			return s, usagef("--suite and --problems exclude each other")
		}
		f.problems = mixedsuite.Names()
	case "broad":
		if len(f.problems) > 0 {
			return s, usagef("--suite and --problems exclude each other")
		}
	default:
		return s, usagef("unknown --suite %q: the predefined suites are user, mixed and broad", f.suiteName)
	}
	if f.suiteName != "broad" && (len(f.bbobDims) > 0 || len(f.bbobInsts) > 0) {
		return s, usagef("--bbob-dims and --bbob-instances apply to --suite broad")
	}
	if f.half != "" && !slices.Contains(bench.Halves, f.half) {
		return s, usagef("bad --half %q: use %s or %s", f.half, bench.HalfTune, bench.HalfHeldOut)
	}
	switch {
	case len(f.problems) == 0 && f.suiteName != "broad":
		return s, usagef("--problems or --suite is required, e.g. --problems synthetic/branin,synthetic/hartmann3")
	case len(f.acqs) == 0 && !f.appG && !f.list:
		return s, usagef("--acqs is required, e.g. --acqs tes-ep,ei,ucb")
	case f.seeds < 1:
		return s, usagef("bad --seeds %d: must be ≥ 1", f.seeds)
	case f.iters < 1:
		return s, usagef("bad --iters %d: must be ≥ 1", f.iters)
	case f.init < 0:
		return s, usagef("bad --init %d: must be ≥ 0", f.init)
	case f.jobs < 1:
		return s, usagef("bad --jobs %d: must be ≥ 1", f.jobs)
	case math.IsNaN(f.noiseVar) || math.IsInf(f.noiseVar, 0) || f.noiseVar < 0:
		return s, usagef("bad --noise-var %v: must be a finite number ≥ 0", f.noiseVar)
	case f.out == "" && !f.list:
		return s, usagef("--out is required")
	case f.model != "" && !host.ValidModel(f.model):
		return s, usagef("bad --model %q: use %s, %s or %s", f.model, host.ModelAuto, host.ModelExact, host.ModelLocal)
	case f.localPoints < 0 || f.localPoints > host.MaxLocalPoints:
		return s, usagef("bad --local-points %d: must be in [0, %d] (0: %d)", f.localPoints, host.MaxLocalPoints, host.DefaultLocalPoints)
	}
	if f.init == 0 {
		s.Init = -1 // bench.Suite: negative means no initial design
	}
	if f.noiseVar == 0 {
		s.NoiseVar = -1 // bench.Suite: negative means noise-free
	}
	for _, spec := range f.problems {
		p, err := bench.ParseProblem(spec)
		if err != nil {
			return s, usageError{err}
		}
		s.Problems = append(s.Problems, p)
	}
	if f.suiteName == "user" {
		f.userBudgets(&s)
	}
	if f.suiteName == "broad" {
		if err := f.broadProblems(&s); err != nil {
			return s, err
		}
	}
	if f.half != "" {
		s.Problems = slices.DeleteFunc(s.Problems, func(p bench.Problem) bool { return p.Half() != f.half })
		if len(s.Problems) == 0 {
			return s, usagef("--half %s leaves no problem: none of those given is in the %s half (docs/results/broad/SPLIT.md lists both halves)", f.half, f.half)
		}
	}
	for _, a := range f.acqs {
		s.Acquisitions = append(s.Acquisitions, strings.TrimSpace(a))
	}
	var err error
	if s.Batches, err = bench.ParseBatches(f.batches); err != nil {
		return s, usageError{err}
	}
	if s.Params, err = bench.ParseParams(f.params); err != nil {
		return s, usageError{err}
	}
	if len(s.Params) == 0 {
		s.Params = nil
	}
	s.Command = "tesbo-host " + quoteArgs(os.Args[1:])
	return s, nil
}

// userBudgets gives the user suite's problems their own initial design and
// iterations (usersuite.Budget), except what --init or --iters set for all.
func (f *benchFlags) userBudgets(s *bench.Suite) {
	given := func(name string) bool { return f.changed != nil && f.changed(name) }
	budgets := map[string]bench.Problem{}
	for _, p := range bench.UserProblems() {
		budgets[p.Name] = p
	}
	for i, p := range s.Problems {
		b := budgets[p.Name]
		if !given("iters") {
			s.Problems[i].Iters = b.Iters
		}
		if !given("init") {
			s.Problems[i].Init = b.Init
		}
	}
}

// broadProblems sets the broad suite's problems (bench.BroadProblems) with
// their budgets, except what --init or --iters set for all.
func (f *benchFlags) broadProblems(s *bench.Suite) error {
	var o bench.BroadOptions
	var err error
	if o.BBOBDims, err = bench.ParseInts("--bbob-dims", f.bbobDims); err != nil {
		return usageError{err}
	}
	if o.BBOBInstances, err = bench.ParseInts("--bbob-instances", f.bbobInsts); err != nil {
		return usageError{err}
	}
	if s.Problems, err = bench.BroadProblems(o); err != nil {
		return usageError{err}
	}
	given := func(name string) bool { return f.changed != nil && f.changed(name) }
	for i := range s.Problems {
		if given("iters") {
			s.Problems[i].Iters = 0
		}
		if given("init") {
			s.Problems[i].Init = 0
		}
	}
	return nil
}

// printList prints the suite's problems, one per line: label, half
// ("-" outside the split), initial design at batch size 1 and iterations,
// tab-separated (for scripts, e.g. docs/results/broad/side-by-side.sh).
func printList(w io.Writer, s bench.Suite) {
	for _, p := range s.Problems {
		h := cmp.Or(p.Half(), "-")
		init := cmp.Or(p.Init, s.Init, bench.DefaultInit)
		if p.Init == 0 && s.Init < 0 {
			init = 0
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\n", p.Label(), h, init, cmp.Or(p.Iters, s.Iters, bench.DefaultIters))
	}
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func runBench(cmd *cobra.Command, f *benchFlags) error {
	s, err := f.suite()
	if err != nil {
		return err
	}
	if f.list {
		printList(os.Stdout, s)
		return nil
	}
	log, err := f.logger()
	if err != nil {
		return err
	}
	s.Logger = log
	if _, err := f.loaderOptions(log); err != nil { // bad plugin flags fail before any run
		return err
	}
	ctx, sig := signalContext(cmd.Context())
	defer sig.stop()
	op := &benchOpener{c: &f.common, log: log}
	defer op.close()
	s.Open = op.open

	if f.appG {
		if _, err := bench.BatchCurve(ctx, s); err != nil {
			return benchError(ctx, sig, err)
		}
		fmt.Fprintf(os.Stdout, "wrote %s/%s and %s/%s\n", s.Out, bench.BatchCurveSummary, s.Out, bench.BatchCurveFile)
		return nil
	}
	rep, err := bench.Run(ctx, s)
	if rep != nil {
		fmt.Fprintf(os.Stdout, "%d runs: %d done, %d already complete, %d failed, %d interrupted or not started; wall %s (total %s)\n",
			len(rep.Runs), rep.Count(bench.StatusDone), rep.Count(bench.StatusSkipped), rep.Count(bench.StatusFailed),
			rep.Count(bench.StatusInterrupted)+rep.Count(bench.StatusNotStarted),
			rep.Wall.Round(time.Second), rep.TotalWall.Round(time.Second))
		if len(rep.Files) > 0 {
			fmt.Fprintf(os.Stdout, "results: %s/%s, %s/%s\n", s.Out, bench.SummaryFile, s.Out, bench.RunsFile)
		}
	}
	if err != nil {
		return benchError(ctx, sig, err)
	}
	if n := rep.Count(bench.StatusFailed); n > 0 {
		return fmt.Errorf("%d run(s) failed (listed with their errors in %s/%s); running the same command again retries them, which helps where the cause has passed (a crash, a timeout), not where it is the setting (an acquisition the problem cannot take)", n, s.Out, bench.SummaryFile)
	}
	return nil
}

// benchError classifies a bench error: interrupted (exit 128+signal),
// bad input (exit 2) or failure.
func benchError(ctx context.Context, sig *signals, err error) error {
	if ctx.Err() != nil {
		code := exitFailure
		if sig.sig != nil {
			code = exitCodeFor(sig.sig)
		}
		return interruptedError{code: code, err: err}
	}
	var inv *bench.InvalidError
	if errors.As(err, &inv) {
		return usageError{err}
	}
	return err
}

// benchOpener opens synthetic/* problems in-process (a fresh objective per
// run) and other names from the plugins directory, discovered on first use
// (one shared plugin instance per name, so those runs are exclusive).
type benchOpener struct {
	c   *common
	log zerolog.Logger

	once sync.Once
	reg  *loader.Registry
	err  error
}

func (o *benchOpener) open(ctx context.Context, name string) (sdk.Objective, bool, error) {
	if strings.HasPrefix(name, "synthetic/") || strings.HasPrefix(name, usersuite.Prefix) || strings.HasPrefix(name, mixedsuite.Prefix) {
		return bench.Synthetic(ctx, name)
	}
	o.once.Do(func() {
		// The registry outlives this call: it serves every later run.
		o.reg, o.err = openPlugins(context.WithoutCancel(ctx), o.c, o.c.pluginsDir(""), o.log)
	})
	if o.err != nil {
		return nil, false, o.err
	}
	obj, err := loadObjective(ctx, o.reg, name)
	if err != nil {
		return nil, false, err
	}
	return obj, true, nil
}

func (o *benchOpener) close() {
	if o.reg != nil {
		o.reg.Close()
	}
}
