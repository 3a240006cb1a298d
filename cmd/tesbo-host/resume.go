package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/host/loader"
	"github.com/tesbo/tesbo/sdk"
)

type resumeFlags struct {
	common
	db, study string
	iters     int
	parallel  int
}

func newResumeCmd() *cobra.Command {
	var f resumeFlags
	cmd := &cobra.Command{
		Use:   "resume --db PATH --study NAME [flags]",
		Short: "Continue a stored study",
		Long: `Continue a study stored in --db after Ctrl-C, SIGTERM or kill -9: completed
evaluations are kept, evaluations that were in flight are re-run, and the
seed stream continues exactly where it stopped (a resumed study produces the
same trials as an uninterrupted one). The study's settings come from the
database; --iters sets a new total number of BO iterations.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runResume(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.db, "db", "", "study database: SQLite path or postgres:// URL")
	fl.StringVar(&f.study, "study", "", "study name")
	fl.IntVar(&f.iters, "iters", 0, "total BO iterations (default: the study's): the new budget, init + iters × batch evaluations (on a study workers share, of all its workers)")
	fl.IntVar(&f.parallel, "parallel", 0, "concurrent evaluations (default: the study's); on a study workers share, this process's evaluation slots")
	fl.DurationVar(&f.evalTimeout, "eval-timeout", 0, "limit per plugin call for this process (the study's own limit still applies)")
	f.common.register(cmd, "plugins directory (default: the one the study was started with)")
	cmd.MarkFlagRequired("db")
	cmd.MarkFlagRequired("study")
	return cmd
}

func runResume(cmd *cobra.Command, f *resumeFlags) error {
	if err := checkStudyFlag(f.study); err != nil {
		return err
	}
	switch {
	case f.iters < 0:
		return usagef("bad --iters %d: must be ≥ 0", f.iters)
	case f.parallel < 0:
		return usagef("bad --parallel %d: must be ≥ 1", f.parallel)
	case f.evalTimeout < 0:
		return usagef("bad --eval-timeout %v: must be ≥ 0", f.evalTimeout)
	}
	log, err := f.logger()
	if err != nil {
		return err
	}
	if _, err := f.loaderOptions(log); err != nil {
		return err
	}
	ctx, sig := signalContext(cmd.Context())
	defer sig.stop()
	db, err := openDB(ctx, sig, f.db, false, log)
	if err != nil {
		return err
	}
	defer db.Close()
	stored := storedPlugins{c: &f.common, log: log}
	defer stored.close()
	var out *output
	o, err := host.Resume(ctx, db, f.study, host.ResumeOptions{
		Iters: f.iters, Parallel: f.parallel, Shared: host.IsPostgresURL(f.db),
		Worker: workerOptions(&f.common, 0, 0, log),
		Load:   stored.load,
		OnStudy: func(s *host.Study) {
			out = newOutput(s, f.json, log)
			s.SetCallbacks(out.onIteration, out.onTrial)
		},
		Summarize: !f.json,
	})
	var be *host.BudgetError
	var pe *host.ParallelError
	switch {
	case errors.As(err, &be):
		return usagef("--iters is the new total of BO iterations, and study %q has already run %d, more than %d: pass --iters %d to run %d more",
			f.study, be.Done, be.Iters, be.Done+be.Iters, be.Iters)
	case errors.As(err, &pe):
		return usagef("bad --parallel %d: must be between 1 and %d", pe.Parallel, host.MaxParallel)
	case o != nil && o.Complete:
		if err != nil {
			return err
		}
		study := o.Study
		fmt.Fprintf(os.Stderr, "tesbo-host: study %q is already complete: it has run all %d BO iterations of its budget; --iters sets a new total, e.g. --iters %d runs 10 more\n",
			f.study, study.Iteration(), study.Iteration()+10)
		if !f.json {
			printSummary(os.Stdout, study, o.Result, f.db, true)
		}
		complete, failed := outcomes(study.Trials())
		return allFailed(complete, failed, f.db, f.study)
	}
	return finish(ctx, sig, o, err, out, f.json, f.db, db)
}

// openStoredObjective opens the plugins directory a stored study was
// started with (or --plugins) and loads the study's objective by the name
// it was started with. The study's evaluation limit applies unless
// --eval-timeout was given: the loader restarts a plugin past it.
func openStoredObjective(ctx context.Context, c *common, st host.Options, info sdk.Info, log zerolog.Logger) (*loader.Registry, *loader.Objective, error) {
	if c.evalTimeout == 0 {
		c.evalTimeout = st.EvalTimeout
	}
	dir := c.pluginsDir(st.Meta[metaPlugins])
	if c.plugins == "" && os.Getenv("TESBO_PLUGINS") == "" && st.Meta[metaPlugins] != "" {
		log.Info().Str("dir", dir).Msg("plugins directory stored with the study (set --plugins or TESBO_PLUGINS to choose another)")
	}
	reg, err := openPlugins(ctx, c, dir, log)
	if err != nil {
		return nil, nil, err
	}
	name := st.Meta[metaObjective]
	if name == "" {
		name = info.Name
	}
	obj, err := loadObjective(ctx, reg, name)
	if err != nil {
		reg.Close()
		return nil, nil, err
	}
	return reg, obj, nil
}
