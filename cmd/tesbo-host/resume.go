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
	"github.com/tesbo/tesbo/store"
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
	fl.IntVar(&f.iters, "iters", 0, "total BO iterations (default: the study's); on a study workers share, the new budget of all its workers: init + iters × batch evaluations")
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
	st, info, err := host.StoredSettings(ctx, db, f.study)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return usageError{err}
		}
		return usageError{fmt.Errorf("read study %q: %w", f.study, err)}
	}
	// A study workers share (always on PostgreSQL): join them.
	if live, err := host.LiveWorkers(ctx, db, f.study); err != nil {
		return err
	} else if live || store.IsPostgresURL(f.db) {
		// This worker's slots: --parallel, else the study's own (as in a
		// single-process resume).
		par := f.parallel
		if par == 0 {
			par = max(st.Parallel, 1)
		}
		if par > host.MaxParallel {
			return usagef("bad --parallel %d: must be between 1 and %d", par, host.MaxParallel)
		}
		if f.iters > 0 {
			// The budget is global: raise it for every worker.
			if err := host.SetWorkerBudget(ctx, db, f.study, f.iters); err != nil {
				return usageError{err}
			}
		}
		return joinAsWorker(ctx, sig, db, f.study, &f.common, host.WorkerOptions{Parallel: par, Logger: log}, true, log)
	}
	// Refuse a study another process is running before starting plugins
	// (OpenStudy takes the lease, and decides again, atomically).
	if row, err := db.Study(ctx, f.study); err == nil {
		if err := db.CheckLease(ctx, row.ID); err != nil {
			return usageError{err}
		}
	}
	reg, obj, err := openStoredObjective(ctx, &f.common, st, info, log)
	if err != nil {
		return err
	}
	defer reg.Close()
	custom, err := resolveAcq(ctx, reg, st.Acquisition)
	if err != nil {
		return err
	}
	study, err := host.OpenStudy(ctx, db, f.study, host.Options{Proposer: custom.proposer, Suggester: custom.suggester, Iters: f.iters, Parallel: f.parallel, Logger: log})
	var be *host.BudgetError
	if errors.As(err, &be) {
		return usagef("--iters is the new total of BO iterations, and study %q has already run %d, more than %d: pass --iters %d to run %d more",
			f.study, be.Done, be.Iters, be.Done+be.Iters, be.Iters)
	}
	if err != nil {
		return usageError{err}
	}
	defer study.Close() // releases the study's lease
	// A study whose last record is missing is not complete: Run makes it.
	if study.Done() && study.Recorded() {
		fmt.Fprintf(os.Stderr, "tesbo-host: study %q is already complete: it has run all %d BO iterations of its budget; --iters sets a new total, e.g. --iters %d runs 10 more\n",
			f.study, study.Iteration(), study.Iteration()+10)
		if !f.json {
			res, err := study.Run(ctx, obj) // no work: builds the summary
			if err != nil {
				return err
			}
			printSummary(os.Stdout, study, res, f.db, true)
		}
		complete, failed := outcomes(study.Trials())
		return allFailed(complete, failed, f.db, f.study)
	}
	log.Info().Str("study", f.study).Int("trials", len(study.Trials())).Int("in_flight", len(study.InFlight())).Msg("resuming")
	return runStudy(ctx, sig, study, obj, f.json, f.db, log)
}

// openStoredObjective opens the plugins directory a stored study was
// started with (or --plugins) and loads the study's objective by the name
// it was started with. The study's evaluation limit applies unless
// --eval-timeout was given: the loader restarts a plugin past it.
func openStoredObjective(ctx context.Context, c *common, st host.Options, info sdk.Info, log zerolog.Logger) (*loader.Registry, *loader.Objective, error) {
	if c.evalTimeout == 0 {
		c.evalTimeout = st.EvalTimeout
	}
	reg, err := openPlugins(ctx, c, c.pluginsDir(st.Meta[metaPlugins]), log)
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
