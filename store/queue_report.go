package store

import (
	"context"
	"fmt"
)

// ReportLeased records intermediate value p of trial id that worker h
// leased (LeaseTrial), as it is reported, so that a shared study's
// readers (tesbo-host trials, the web view) see the curve grow. Steps must
// increase. A trial that is not running under h's lease (it expired and
// was reclaimed, or it finished) gives an error wrapping ErrConflict and
// nothing is written: a worker cut off cannot write into the next
// attempt's curve. The outcome (ReportTrial) replaces what was reported;
// the next lease of the trial drops it.
func (d *DB) ReportLeased(ctx context.Context, studyID int64, h Holder, id int, p Intermediate) error {
	if err := checkReported(id, p); err != nil {
		return err
	}
	err := d.queueTx(ctx, "report leased", func(tx *sqlTx) error {
		return appendReported(ctx, tx, studyID, id, p, func() error {
			res, err := tx.ExecContext(ctx, `UPDATE trials SET holder=holder WHERE study_id=? AND id=? AND status='running' AND holder=?`,
				studyID, id, h.ID)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n != 1 {
				return fmt.Errorf("trial %d is not running under this worker's lease: %w", id, ErrConflict)
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("report trial %d: %w", id, err)
	}
	return nil
}

// ReportLeased is DB.ReportLeased.
func (d *Memory) ReportLeased(ctx context.Context, studyID int64, h Holder, id int, p Intermediate) error {
	if err := checkReported(id, p); err != nil {
		return err
	}
	err := d.queue(ctx, studyID, true, func(s *memStudy) error {
		r := s.trials[id]
		if r == nil || r.status != Running || r.holder != h.ID {
			return fmt.Errorf("trial %d is not running under this worker's lease: %w", id, ErrConflict)
		}
		return r.appendReported(p)
	})
	if err != nil {
		return fmt.Errorf("report trial %d: %w", id, err)
	}
	return nil
}
