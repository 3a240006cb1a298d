package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/store"
)

type workerFlags struct {
	common
	db, study string
	parallel  int
	leaseTTL  time.Duration
}

func newWorkerCmd() *cobra.Command {
	var f workerFlags
	cmd := &cobra.Command{
		Use:   "worker --db PATH|URL --study NAME [--plugins DIR] [--parallel N]",
		Short: "Join a stored study as one of many workers",
		Long: `Join a study stored in --db (usually a postgres:// URL shared by many
machines) and evaluate its trials until the study is complete. Any number of
workers, on any number of machines, may work on one study; each loads the
objective from its own plugins directory. One of them at a time proposes new
points, conditioned on the trials still running (acquisitions
` + strings.Join(host.AsyncAcquisitions(), ", ") + `).
A worker killed mid-evaluation loses its trials to the others once its lease
expires (at once on the same host).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkerCmd(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.db, "db", "", "study database: postgres:// URL or SQLite path")
	fl.StringVar(&f.study, "study", "", "study name")
	fl.IntVar(&f.parallel, "parallel", 1, fmt.Sprintf("concurrent evaluations of this worker (at most %d)", host.MaxParallel))
	fl.DurationVar(&f.evalTimeout, "eval-timeout", 0, "limit per plugin call for this process (the study's own limit still applies)")
	fl.DurationVar(&f.leaseTTL, "lease-ttl", 0, "how long a trial stays leased without a heartbeat (default 30s)")
	fl.MarkHidden("lease-ttl")
	f.common.register(cmd, "plugins directory (default: the one the study was started with)")
	cmd.MarkFlagRequired("db")
	cmd.MarkFlagRequired("study")
	return cmd
}

func runWorkerCmd(cmd *cobra.Command, f *workerFlags) error {
	if err := checkStudyFlag(f.study); err != nil {
		return err
	}
	switch {
	case f.parallel < 1 || f.parallel > host.MaxParallel:
		return usagef("bad --parallel %d: must be between 1 and %d", f.parallel, host.MaxParallel)
	case f.evalTimeout < 0:
		return usagef("bad --eval-timeout %v: must be ≥ 0", f.evalTimeout)
	case f.leaseTTL < 0:
		return usagef("bad --lease-ttl %v: must be ≥ 0", f.leaseTTL)
	}
	log, err := f.logger()
	if err != nil {
		return err
	}
	ctx, sig := signalContext(cmd.Context())
	defer sig.stop()
	db, err := openDB(ctx, sig, f.db, false, log)
	if err != nil {
		return err
	}
	defer db.Close()
	return joinAsWorker(ctx, sig, db, f.study, &f.common, host.WorkerOptions{Parallel: f.parallel, LeaseTTL: f.leaseTTL, Logger: log}, false, log)
}

// joinAsWorker loads the study's objective and runs this process as one of
// its workers ('worker', and 'run' or 'resume' on a study workers share).
// With summary (the coordinator: 'run' or 'resume') a complete study ends
// with the summary table a single-process run prints.
func joinAsWorker(ctx context.Context, sig *signals, db *store.DB, study string, c *common, o host.WorkerOptions, summary bool, log zerolog.Logger) error {
	st, info, err := host.StoredSettings(ctx, db, study)
	if err != nil {
		return usageError{err}
	}
	if err := host.CheckAsync(st.Acquisition); err != nil {
		return usageError{err}
	}
	// A study one process ran and that stopped is refused before its
	// plugin starts (RunWorker would refuse it too).
	if err := runAloneUsage(host.CheckRunAlone(ctx, db, study), db, study); err != nil {
		return err
	}
	reg, obj, err := openStoredObjective(ctx, c, st, info, log)
	if err != nil {
		return err
	}
	defer reg.Close()
	log.Info().Str("study", study).Int("parallel", o.Parallel).Msg("joining the study as a worker")
	var jsonOut *bufio.Writer
	if c.json {
		// The proposer (any worker) stores the records; print them here.
		jsonOut = bufio.NewWriter(os.Stdout)
		o.OnIteration = func(r host.Record) {
			if b, err := json.Marshal(r); err == nil {
				jsonOut.Write(append(b, '\n'))
				jsonOut.Flush()
			}
		}
	}
	start := time.Now()
	res, err := host.RunWorker(ctx, db, study, obj, o)
	if err != nil {
		var held *store.LeaseHeldError
		if errors.As(err, &held) {
			return err
		}
		var alone *host.RunAloneError
		if errors.As(err, &alone) {
			return runAloneUsage(err, db, study)
		}
		if ctx.Err() != nil {
			code := exitFailure
			if sig.sig != nil {
				code = exitCodeFor(sig.sig)
			}
			return interruptedError{code: code, err: fmt.Errorf("worker stopped (%v); its unfinished trials go back to the queue", context.Cause(ctx))}
		}
		return err
	}
	if !summary || c.json { // with --json stdout holds only the records
		if !c.json {
			fmt.Fprintf(os.Stdout, "study %s complete: this worker evaluated %d trials, proposed %d points (%d late reports). List them with: tesbo-host trials --db %s --study %s\n",
				study, res.Evaluated, res.Proposed, res.Late, shellQuote(db.Path()), shellQuote(study))
		}
		return workersAllFailed(ctx, db, study)
	}
	view, sum, err := host.WorkerSummary(ctx, db, study, obj)
	if err != nil {
		return fmt.Errorf("summarize study %q: %w", study, err)
	}
	sum.Elapsed = time.Since(start)
	printSummary(os.Stdout, view, sum, db.Path(), false)
	fmt.Fprintf(os.Stdout, "this process evaluated %d trials and proposed %d points (%d late reports); list them all with: tesbo-host trials --db %s --study %s\n",
		res.Evaluated, res.Proposed, res.Late, shellQuote(db.Path()), shellQuote(study))
	return allFailed(sum.Evaluations, sum.Failures, db.Path(), study)
}

// runAloneUsage turns host's *RunAloneError into the one-line refusal that
// points at 'resume' (exit 2); other errors it returns as they are.
func runAloneUsage(err error, db *store.DB, study string) error {
	var alone *host.RunAloneError
	if !errors.As(err, &alone) {
		return err
	}
	return usagef("study %q in %s was run by a single process ('tesbo-host run'), not by workers, and a worker would not continue it exactly: continue it with: tesbo-host resume --db %s --study %s",
		study, db.Path(), shellQuote(db.Path()), shellQuote(study))
}
