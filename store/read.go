package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Activity is a cheap summary of a study's trials and iterations, read by
// one aggregate query per table: enough to list studies without loading
// their trials, and to notice that a study changed (two Activity values
// differ after any committed write to its trials or iterations).
type Activity struct {
	Trials                             int
	Pending, Running, Complete, Failed int
	Pruned                             int // stopped early
	// Outside counts the finished trials of negative iterations: told or
	// imported from outside the study's own proposals
	// (host.ExternalIteration, host.ImportedIteration), which use up none
	// of its budget. Complete + Failed + Pruned − Outside are the study's
	// own finished trials.
	Outside int
	// Attempts is the sum of the trials' evaluation attempts (it grows on
	// a retry, which changes nothing else).
	Attempts int
	// MaxValue and MinValue are the largest and smallest completed values
	// (nil when nothing has completed).
	MaxValue, MinValue *float64
	// LastChange is the latest time a trial was created, started or
	// finished (the study's creation time when it has no trials).
	LastChange time.Time
	// Iterations counts the iteration rows, Records those with an output
	// record (a finished BO iteration).
	Iterations, Records int
}

// Activity returns the study's Activity.
func (d *DB) Activity(ctx context.Context, studyID int64) (Activity, error) {
	var a Activity
	if d.version.Load() < 1 {
		return a, nil
	}
	var maxV, minV sql.NullFloat64
	var created, started, finished, studyTime sql.NullInt64
	err := d.db.QueryRowContext(ctx,
		`SELECT count(*),
		        coalesce(sum(CASE WHEN status='pending' THEN 1 ELSE 0 END), 0),
		        coalesce(sum(CASE WHEN status='running' THEN 1 ELSE 0 END), 0),
		        coalesce(sum(CASE WHEN status='complete' THEN 1 ELSE 0 END), 0),
		        coalesce(sum(CASE WHEN status='failed' THEN 1 ELSE 0 END), 0),
		        coalesce(sum(CASE WHEN status='pruned' THEN 1 ELSE 0 END), 0),
		        coalesce(sum(CASE WHEN iteration < 0 AND status IN ('complete','failed','pruned') THEN 1 ELSE 0 END), 0),
		        coalesce(sum(attempts), 0),
		        max(CASE WHEN status='complete' THEN value END),
		        min(CASE WHEN status='complete' THEN value END),
		        max(created_at), max(started_at), max(finished_at),
		        (SELECT created_at FROM studies WHERE id=?)
		 FROM trials WHERE study_id=?`, studyID, studyID).
		Scan(&a.Trials, &a.Pending, &a.Running, &a.Complete, &a.Failed, &a.Pruned, &a.Outside, &a.Attempts,
			&maxV, &minV, &created, &started, &finished, &studyTime)
	if err != nil {
		return a, fmt.Errorf("read activity of study %d: %w", studyID, classify(err))
	}
	if maxV.Valid {
		a.MaxValue, a.MinValue = &maxV.Float64, &minV.Float64
	}
	last := studyTime.Int64
	for _, t := range []sql.NullInt64{created, started, finished} {
		if t.Valid && t.Int64 > last {
			last = t.Int64
		}
	}
	a.LastChange = time.Unix(0, last)
	if d.version.Load() < 2 {
		return a, nil
	}
	err = d.db.QueryRowContext(ctx, `SELECT count(*), count(record) FROM iterations WHERE study_id=?`, studyID).
		Scan(&a.Iterations, &a.Records)
	if err != nil {
		return a, fmt.Errorf("read activity of study %d: %w", studyID, classify(err))
	}
	return a, nil
}

// LatestRecord returns the output record of the study's latest finished
// iteration (nil when none has finished).
func (d *DB) LatestRecord(ctx context.Context, studyID int64) ([]byte, error) {
	if d.version.Load() < 2 {
		return nil, nil
	}
	var rec []byte
	err := d.db.QueryRowContext(ctx,
		`SELECT record FROM iterations WHERE study_id=? AND record IS NOT NULL ORDER BY iteration DESC LIMIT 1`,
		studyID).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the latest record of study %d: %w", studyID, classify(err))
	}
	return rec, nil
}
