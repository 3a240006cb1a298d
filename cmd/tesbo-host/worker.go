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
	db, err := waitForStudy(ctx, sig, f.db, f.study, studyWait, log)
	if err != nil {
		return err
	}
	defer db.Close()
	stored := storedPlugins{c: &f.common, log: log}
	defer stored.close()
	o, err := host.Join(ctx, db, f.study, host.JoinOptions{Worker: workerOptions(&f.common, f.parallel, f.leaseTTL, log), Load: stored.load})
	return finish(ctx, sig, o, err, nil, f.json, f.db, db)
}

// studyWait is how long a worker waits for its study to be created: a
// launcher that starts the coordinator's 'run' and the workers at once
// must not lose the workers that look first.
const studyWait = 15 * time.Second

// waitForStudy opens the database at path, waiting up to d for study
// name to exist in it (Join then reports what it finds, a study still
// missing included). It reopens the database while it waits: a database
// the coordinator has not yet set up reads as empty until reopened.
func waitForStudy(ctx context.Context, sig *signals, path, name string, d time.Duration, log zerolog.Logger) (*host.Storage, error) {
	deadline := time.Now().Add(d)
	for logged := false; ; logged = true {
		db, err := openDB(ctx, sig, path, false, log)
		if err != nil {
			return nil, err
		}
		_, _, err = host.StoredSettings(ctx, db, name)
		if !errors.Is(err, host.ErrNotFound) || time.Now().After(deadline) {
			return db, nil
		}
		db.Close()
		if !logged {
			log.Info().Str("study", name).Dur("up_to", d).Msg("waiting for the study to be created")
		}
		select {
		case <-ctx.Done():
			return openDB(ctx, sig, path, false, log)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// workerOptions are the options of this process as a worker: with
// --json it prints the study's iteration records, which the proposer
// (any worker) stores.
func workerOptions(c *common, parallel int, leaseTTL time.Duration, log zerolog.Logger) host.WorkerOptions {
	o := host.WorkerOptions{Parallel: parallel, LeaseTTL: leaseTTL, Logger: log}
	if c.json {
		out := bufio.NewWriter(os.Stdout)
		o.OnIteration = func(r host.Record) {
			if b, err := json.Marshal(r); err == nil {
				out.Write(append(b, '\n'))
				out.Flush()
			}
		}
	}
	return o
}

// finishWorker reports the end of this process's work on a shared study:
// the summary table a single-process run prints when host made one
// (o.Study: 'run' and 'resume' without --json), else one line ('worker').
func finishWorker(ctx context.Context, sig *signals, o *host.Outcome, err error, jsonOut bool, db *host.Storage) error {
	study := ""
	if o != nil {
		study = o.Name
	}
	if err != nil {
		if host.AsLeaseHeld(err) != nil {
			return err
		}
		var alone *host.RunAloneError
		if errors.As(err, &alone) {
			return runAloneUsage(err, db, alone.Study)
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
	res := o.Worker
	if o.Study == nil {
		if !jsonOut { // with --json stdout holds only the records
			fmt.Fprintf(os.Stdout, "study %s complete: this worker evaluated %d trials, proposed %d points (%d late reports). List them with: tesbo-host trials --db %s --study %s\n",
				study, res.Evaluated, res.Proposed, res.Late, shellQuote(db.Path()), shellQuote(study))
		}
		return workersAllFailed(ctx, db, study)
	}
	printSummary(os.Stdout, o.Study, o.Result, db.Path(), false)
	fmt.Fprintf(os.Stdout, "this process evaluated %d trials and proposed %d points (%d late reports); list them all with: tesbo-host trials --db %s --study %s\n",
		res.Evaluated, res.Proposed, res.Late, shellQuote(db.Path()), shellQuote(study))
	return allFailed(o.Result.Evaluations, o.Result.Failures, db.Path(), study)
}

// runAloneUsage turns host's *RunAloneError into the one-line refusal that
// points at 'resume' (exit 2); other errors it returns as they are.
func runAloneUsage(err error, db *host.Storage, study string) error {
	var alone *host.RunAloneError
	if !errors.As(err, &alone) {
		return err
	}
	return usagef("study %q in %s was run by a single process ('tesbo-host run'), not by workers, and a worker would not continue it exactly: continue it with: tesbo-host resume --db %s --study %s",
		study, db.Path(), shellQuote(db.Path()), shellQuote(study))
}
