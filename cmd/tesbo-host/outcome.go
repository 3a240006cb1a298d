package main

import (
	"context"
	"fmt"

	"github.com/tesbo/tesbo/host"
)

// checkStudyFlag refuses a bad --study name (host.CheckStudyName) before
// anything is opened: one line, exit 2, on every command that takes one.
func checkStudyFlag(name string) error {
	if err := host.CheckStudyName(name); err != nil {
		return usagef("bad --study: %v", err)
	}
	return nil
}

// allFailed is the error of a study none of whose evaluations completed
// although some ran (exit 1): a study that learned nothing did not
// succeed, and its errors are in the database.
func allFailed(complete, failed int, dbPath, study string) error {
	if complete > 0 || failed == 0 {
		return nil
	}
	return fmt.Errorf("every evaluation failed (%d of %d): see their errors with: tesbo-host trials --db %s --study %s",
		failed, failed, shellQuote(dbPath), shellQuote(study))
}

// workersAllFailed is allFailed for a worker that does not summarize the
// study: it counts the stored trials.
func workersAllFailed(ctx context.Context, db *host.Storage, study string) error {
	ts, err := db.Trials(ctx, study)
	if err != nil {
		return err
	}
	complete, failed := outcomes(ts)
	return allFailed(complete, failed, db.Path(), study)
}

// outcomes counts the complete and the failed trials.
func outcomes(ts []host.Trial) (complete, failed int) {
	for _, t := range ts {
		switch t.Status {
		case host.Complete:
			complete++
		case host.Failed:
			failed++
		}
	}
	return complete, failed
}
