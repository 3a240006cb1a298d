package main

import (
	"context"
	"math"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/bench"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/host/evalserve"
)

// evalFlags are the flags of 'eval'.
type evalFlags struct {
	common
	objective string
	params    []string
	seed      uint64
	noiseVar  float64
}

func newEvalCmd() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval --objective NAME[:key=value...] [--param k=v]... [--seed S] [--noise-var V] [--eval-timeout D]",
		Short: "Serve an objective over JSON lines in unit-cube coordinates (for other BO tools)",
		Long: `Serve one objective over JSON lines on stdin/stdout, in the coordinates and
sign a study sees, so that another tool (e.g. an external BoTorch runner)
optimizes exactly tesbo's problem. First one description line:

  {"name": "user/bumps2", "dim": 2, "optimum": 1.23}     (optimum: f*, or null)

then, for every line {"x": [d numbers in [0,1]]} on stdin, one line (blank
lines are skipped and get none):

  {"y": observed value, "f": noise-free value or null}

x is mapped to native units as in a study (log scales, integer rounding,
categorical bins); values are maximized (a minimizing objective's values and
optimum are negated). y carries the observation noise a study would see (the
objective's own, seeded by --seed, with --noise-var as in 'run'); f is the
noise-free value when the objective has one (synthetic/*, user/*, mixed/*),
else null. A bad line (malformed JSON, wrong length, NaN or Inf, a
coordinate outside [0,1] by more than 1e-9, longer than 1 MiB) or a failed
evaluation gets {"error": "..."} on its line, and serving goes on; the end
of stdin ends it with exit status 0.

NAME takes bench's problem syntax (synthetic/ackley:dim=4, equivalent to
--objective synthetic/ackley --param dim=4); synthetic/*, user/* and mixed/*
run in-process, other names are loaded from --plugins.

Example:
  echo '{"x": [0.5, 0.5]}' | tesbo-host eval --objective synthetic/branin --seed 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEval(cmd.Context(), &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.objective, "objective", "", "objective to serve, NAME[:key=value...] (see 'tesbo-host plugins' and 'tesbo-host bench --help')")
	fl.StringArrayVar(&f.params, "param", nil, "key=value passed to the objective (repeatable)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the objective's observation noise (a study's seed): the same seed gives the same values")
	fl.Float64Var(&f.noiseVar, "noise-var", host.DefaultNoiseVar, "observation-noise variance benchmark objectives add (sent as param noise_var; 0: none)")
	fl.StringVar(&f.plugins, "plugins", "", "plugins directory for objectives other than synthetic/*, user/*, mixed/* (default $TESBO_PLUGINS or ./plugins)")
	fl.DurationVar(&f.evalTimeout, "eval-timeout", 0, "limit per evaluation of a plugin's objective, e.g. 30s (0: none; 10s for objective scripts); a plugin past it is restarted and the line gets an error")
	fl.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn, error")
	fl.BoolVar(&f.unrestricted, "unrestricted", false, "give Yaegi scripts the whole standard library (os/exec, net, file writes, ...)")
	fl.StringArrayVar(&f.checksums, "plugin-sha256", nil, "NAME=HEX: refuse plugin NAME unless its SHA-256 is HEX (repeatable)")
	fl.StringArrayVar(&f.envAllow, "plugin-env", nil, pluginEnvHelp)
	fl.StringVar(&f.pluginMemory, "plugin-memory", "", pluginMemoryHelp)
	cmd.MarkFlagRequired("objective")
	return cmd
}

// problem merges --objective's own parameters and --param into one
// problem; noise_var among the former overrides --noise-var.
func (f *evalFlags) problem() (bench.Problem, host.Options, error) {
	o := host.Options{Seed: f.seed, NoiseVar: f.noiseVar, ZeroNoise: f.noiseVar == 0}
	if math.IsNaN(f.noiseVar) || math.IsInf(f.noiseVar, 0) || f.noiseVar < 0 {
		return bench.Problem{}, o, usagef("bad --noise-var %v: must be a finite number ≥ 0", f.noiseVar)
	}
	p, err := bench.ParseProblem(f.objective)
	if err != nil {
		return p, o, usageError{err}
	}
	extra, err := parseRunParams(f.params)
	if err != nil {
		return p, o, err
	}
	params := map[string]string{}
	for k, v := range p.Params {
		if k == bench.KeyNoiseVar {
			nv, _ := strconv.ParseFloat(v, 64) // checked by ParseProblem
			o.NoiseVar, o.ZeroNoise = nv, nv == 0
			continue
		}
		params[k] = v
	}
	for k, v := range extra {
		if _, dup := params[k]; dup {
			return p, o, usagef("bad --param %s=%s: %s is already set in --objective %s", k, v, k, f.objective)
		}
		params[k] = v
		if p.Params == nil {
			p.Params = map[string]string{}
		}
		p.Params[k] = v
	}
	o.Params = params
	return p, o, nil
}

func runEval(ctx context.Context, f *evalFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, opts, err := f.problem()
	if err != nil {
		return err
	}
	if f.evalTimeout < 0 {
		return usagef("bad --eval-timeout %v: must be ≥ 0", f.evalTimeout)
	}
	log, err := f.logger()
	if err != nil {
		return err
	}
	if _, err := f.loaderOptions(log); err != nil {
		return err
	}
	op := &benchOpener{c: &f.common, log: log}
	defer op.close()
	obj, _, err := op.open(ctx, p.Name)
	if err != nil {
		return usageError{err}
	}
	if err := host.ConfigureObjective(ctx, obj, p.Name, opts); err != nil {
		return usageError{err}
	}
	srv, err := evalserve.New(ctx, obj, p.Label())
	if err != nil {
		return usageError{err}
	}
	return srv.Serve(ctx, os.Stdin, os.Stdout)
}
