package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/host/loader"
	"github.com/tesbo/tesbo/sdk"
)

// finish turns what host.Start, host.Resume or host.Join did (o, err)
// into the command's output and exit status: the summary table, a resume
// hint for an interrupted run, exit 2 for bad input.
func finish(ctx context.Context, sig *signals, o *host.Outcome, err error, out *output, jsonOut bool, dbPath string, db *host.Storage) error {
	if out != nil {
		out.finish()
	}
	if o != nil && o.Worker != nil {
		return finishWorker(ctx, sig, o, err, jsonOut, db)
	}
	if o == nil || o.Study == nil { // refused, or interrupted, before anything ran
		if ie := interruptedBy(ctx, "starting the study"); ie != nil {
			return ie
		}
		return inputUsage(err, db)
	}
	study, res := o.Study, o.Result
	if err != nil {
		if ctx.Err() != nil {
			code := exitFailure
			if sig.sig != nil {
				code = exitCodeFor(sig.sig)
			}
			n := 0
			if res != nil {
				n, _, _ = ownEvaluations(res)
			}
			return interruptedError{code: code, err: fmt.Errorf("interrupted (%v) after %d completed evaluations; the study is saved. Resume with: tesbo-host resume --db %s --study %s",
				context.Cause(ctx), n, shellQuote(host.Redact(dbPath)), shellQuote(study.Name()))}
		}
		return inputUsage(err, db) // e.g. the objective refused the stored parameters: exit 2, as for run
	}
	if !jsonOut {
		printSummary(os.Stdout, study, res, dbPath, false)
	}
	return allFailed(res.Evaluations, res.Failures, dbPath, study.Name())
}

// inputUsage reports host's refusals of bad input as usage errors (exit
// 2); other errors pass as they are.
func inputUsage(err error, db *host.Storage) error {
	var alone *host.RunAloneError
	var in *host.InputError
	switch {
	case errors.As(err, &alone):
		return runAloneUsage(err, db, alone.Study)
	case errors.As(err, &in):
		return usageError{in.Err}
	}
	return err
}

// storedPlugins loads a stored study's objective for host (host.Loader)
// and closes its plugins when the command ends.
type storedPlugins struct {
	c   *common
	log zerolog.Logger
	reg *loader.Registry
}

// load opens the plugins directory the study was started with (or
// --plugins), loads its objective and resolves its acquisition.
func (p *storedPlugins) load(ctx context.Context, st host.Options, info sdk.Info) (host.Loaded, error) {
	reg, obj, err := openStoredObjective(ctx, p.c, st, info, p.log)
	if err != nil {
		return host.Loaded{}, err
	}
	p.reg = reg
	custom, err := resolveAcq(ctx, reg, st.Acquisition)
	if err != nil {
		return host.Loaded{}, err
	}
	return host.Loaded{Objective: obj, Proposer: custom.proposer, Suggester: custom.suggester}, nil
}

func (p *storedPlugins) close() {
	if p.reg != nil {
		p.reg.Close()
	}
}
