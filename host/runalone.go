package host

import (
	"context"
	"fmt"

	"github.com/tesbo/tesbo/store"
)

// RunAloneError is RunWorker's refusal of a study that one process ran on
// its own (Study.Run; 'tesbo-host run' on a SQLite file) and that stopped
// or crashed: in worker mode its proposals would no longer follow the
// study's seed stream, so its trials would differ from an uninterrupted
// run's, while OpenStudy and Run (tesbo-host resume) continue it exactly.
type RunAloneError struct {
	Study string
}

func (e *RunAloneError) Error() string {
	return fmt.Sprintf("study %q was run by a single process, not by workers: continue it with resume, which gives exactly the trials of an uninterrupted run (a worker would not)", e.Study)
}

// checkRunAlone returns a *RunAloneError when a trial of the stored study
// name was evaluated outside worker mode: its status is past pending and
// it names no worker (the queue records the worker of every trial it
// leases, and keeps it when the trial is reclaimed). RunWorker checks it,
// and Join before starting the objective's plugin.
func checkRunAlone(ctx context.Context, db store.Storage, name string) error {
	row, err := db.Study(ctx, name)
	if err != nil {
		return err
	}
	ts, err := loadTrials(ctx, db, row.ID)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.Status != Pending && t.Worker == "" && t.Iteration != ImportedIteration { // a warm start's imports were never evaluated here
			return &RunAloneError{Study: name}
		}
	}
	return nil
}
