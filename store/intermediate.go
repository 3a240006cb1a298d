package store

import (
	"context"
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
// outcome (in the transaction that records it).
func writeIntermediates(ctx context.Context, tx *sqlTx, studyID int64, t *Trial) error {
	if len(t.Intermediates) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE trials SET step=? WHERE study_id=? AND id=?`, lastStep(t), studyID, t.ID); err != nil {
		return fmt.Errorf("intermediate values: %w", err)
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
