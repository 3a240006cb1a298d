package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
)

// Intermediate is one value an evaluation reported on its way (sdk.Report):
// the value, in native units, it reached at Step.
type Intermediate struct {
	Step  int
	Value float64
}

// maxIntermediates bounds a trial's intermediate values (one per step, and
// steps are at most this large: sdk.MaxStepLimit).
const maxIntermediates = 1_000_000

// checkIntermediates refuses what the intermediates table cannot hold or a
// pruned trial without the step it stopped at.
func checkIntermediates(t *Trial) error {
	if len(t.Intermediates) > maxIntermediates {
		return fmt.Errorf("%d intermediate values, at most %d", len(t.Intermediates), maxIntermediates)
	}
	for i, p := range t.Intermediates {
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			return fmt.Errorf("intermediate value at step %d is %v", p.Step, p.Value)
		}
		if p.Step < 0 || p.Step > maxIntermediates || (i > 0 && p.Step <= t.Intermediates[i-1].Step) {
			return fmt.Errorf("intermediate step %d: steps must increase from 0 to %d", p.Step, maxIntermediates)
		}
	}
	if t.Status == Pruned && len(t.Intermediates) == 0 {
		return fmt.Errorf("a pruned trial needs the intermediate values it stopped at")
	}
	return nil
}

// lastStep is the step column: the last reported step (nil for none).
func lastStep(t *Trial) any {
	if n := len(t.Intermediates); n > 0 {
		return t.Intermediates[n-1].Step
	}
	return nil
}

// writeIntermediates stores t's intermediate values and last step with its
// outcome (in the transaction that records it), in place of what was
// reported while it ran (ReportIntermediate): the outcome's curve is the
// whole of it.
func writeIntermediates(ctx context.Context, tx *sqlTx, studyID int64, t *Trial) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM intermediates WHERE study_id=? AND trial_id=?`, studyID, t.ID); err != nil {
		return fmt.Errorf("intermediate values: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE trials SET step=? WHERE study_id=? AND id=?`, lastStep(t), studyID, t.ID); err != nil {
		return fmt.Errorf("intermediate values: %w", err)
	}
	if len(t.Intermediates) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO intermediates(study_id, trial_id, step, value) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("intermediate values: %w", err)
	}
	defer stmt.Close()
	for _, p := range t.Intermediates {
		if _, err := stmt.ExecContext(ctx, studyID, t.ID, p.Step, p.Value); err != nil {
			return fmt.Errorf("intermediate value at step %d: %w", p.Step, err)
		}
	}
	return nil
}

// checkReported refuses an intermediate value the intermediates table
// cannot hold.
func checkReported(id int, p Intermediate) error {
	switch {
	case math.IsNaN(p.Value) || math.IsInf(p.Value, 0):
		return fmt.Errorf("report trial %d: value %v at step %d is not finite", id, p.Value, p.Step)
	case p.Step < 0 || p.Step > maxIntermediates:
		return fmt.Errorf("report trial %d: step %d outside [0, %d]", id, p.Step, maxIntermediates)
	}
	return nil
}

// ReportIntermediate records intermediate value p of in-flight trial id as
// it is reported (an Ask/Tell study's Report), so that a study reopened
// mid-evaluation keeps the curve and the pruner's decision: stop says the
// evaluation was told to stop (kept once said: the trial's step column,
// NULL while it runs on). Steps must increase; a step already reported
// gives an error wrapping ErrConflict, as does a trial not in flight.
// FinishTrial replaces what was reported with the outcome's curve.
func (d *DB) ReportIntermediate(ctx context.Context, studyID int64, id int, p Intermediate, stop bool) error {
	if err := checkReported(id, p); err != nil {
		return err
	}
	var stopAt any
	if stop {
		stopAt = p.Step
	}
	err := d.retryTx(ctx, "report", func(tx *sqlTx) error {
		return appendReported(ctx, tx, studyID, id, p, func() error {
			res, err := tx.ExecContext(ctx, `UPDATE trials SET step=coalesce(step, ?)
			 WHERE study_id=? AND id=? AND status IN ('pending','running')`, stopAt, studyID, id)
			if err != nil {
				return err
			}
			return oneRow(res, id)
		})
	})
	if err != nil {
		return fmt.Errorf("report trial %d: %w", id, err)
	}
	return nil
}

// loadIntermediates attaches the stored intermediate values to trials
// (ordered by ID, as Trials returns them).
func (d *DB) loadIntermediates(ctx context.Context, studyID int64, trials []Trial) error {
	if d.version.Load() < 5 || len(trials) == 0 {
		return nil
	}
	rows, err := d.db.QueryContext(ctx,
		`SELECT trial_id, step, value FROM intermediates WHERE study_id=? ORDER BY trial_id, step`, studyID)
	if err != nil {
		return fmt.Errorf("intermediate values: %w", d.classify(err))
	}
	defer rows.Close()
	byID := make(map[int]int, len(trials))
	for i, t := range trials {
		byID[t.ID] = i
	}
	for rows.Next() {
		var id int
		var p Intermediate
		if err := rows.Scan(&id, &p.Step, &p.Value); err != nil {
			return fmt.Errorf("intermediate values: %w", d.classify(err))
		}
		if i, ok := byID[id]; ok {
			trials[i].Intermediates = append(trials[i].Intermediates, p)
		}
	}
	return d.classify(rows.Err())
}

// appendReported adds intermediate value p to trial id's inside tx, once
// hold (the caller's check that the trial may take it, which may update
// its row) has passed: steps must increase (ErrConflict otherwise).
func appendReported(ctx context.Context, tx *sqlTx, studyID int64, id int, p Intermediate, hold func() error) error {
	var last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(step) FROM intermediates WHERE study_id=? AND trial_id=?`,
		studyID, id).Scan(&last); err != nil {
		return err
	}
	if last.Valid && int64(p.Step) <= last.Int64 {
		return fmt.Errorf("step %d after step %d: steps must increase: %w", p.Step, last.Int64, ErrConflict)
	}
	if err := hold(); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO intermediates(study_id, trial_id, step, value) VALUES (?, ?, ?, ?)`,
		studyID, id, p.Step, p.Value)
	return err
}
