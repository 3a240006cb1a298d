package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// The trial queue: many workers (processes, on any hosts) evaluate one
// study's trials. A pending trial is the queue; a worker takes one with
// LeaseTrial, which marks it running under the worker's Holder with a
// lease that the worker's Heartbeat extends; ReportTrial gives it its
// outcome. A worker that dies stops renewing: ReclaimTrials returns its
// trials to the queue (their attempt counts kept) once their leases
// expire, or at once when the worker ran on the reclaiming host and its
// process is gone, and fails a trial that has used up its attempts with
// "worker lost". A report through a lease that was reclaimed meanwhile is
// kept in trial_attempts, never as a second value.
//
// Under PostgreSQL a trial is taken with SELECT … FOR UPDATE SKIP LOCKED,
// so that workers do not wait on each other's rows; under SQLite the write
// lock serializes them.

// WorkerInfo is a worker registered on a study.
type WorkerInfo struct {
	Holder
	Slots   int
	Started time.Time
	Expires time.Time
}

// Name is how a worker is shown: host:pid.
func (h Holder) Name() string {
	host := h.Host
	if host == "" {
		host = "?"
	}
	return fmt.Sprintf("%s:%d", host, h.PID)
}

// skipLocked is the row-locking clause of a queue read.
func (dl dialect) skipLocked() string {
	if dl == dialectPostgres {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// queueTx runs f as a queue transaction: under PostgreSQL without the
// database-wide write lock (row locks suffice), retried while the database
// is locked or unreachable.
func (d *DB) queueTx(ctx context.Context, what string, f func(*sqlTx) error) error {
	return d.queueTxFor(ctx, what, true, f)
}

// queueTxFor is queueTx, retried while the server is unreachable only if
// waitServer.
func (d *DB) queueTxFor(ctx context.Context, what string, waitServer bool, f func(*sqlTx) error) error {
	if v := d.version.Load(); v < SchemaVersion {
		return fmt.Errorf("%w (schema version %d, current %d)", ErrNeedsMigration, v, SchemaVersion)
	}
	serialized := d.dl == dialectSQLite
	return d.retry(ctx, "write", what, func() error {
		err := d.runTx(ctx, serialized, f)
		if !waitServer && errors.Is(err, ErrUnavailable) {
			return unretried{err}
		}
		return err
	})
}

// RegisterWorker records (or renews) worker h on the study with its number
// of evaluation slots, live for ttl.
func (d *DB) RegisterWorker(ctx context.Context, studyID int64, h Holder, slots int, ttl time.Duration) error {
	now := time.Now()
	err := d.queueTx(ctx, "register worker", func(tx *sqlTx) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO workers(study_id, holder, host, pid, slots, started_at, heartbeat_at, expires_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			 ON CONFLICT(study_id, holder) DO UPDATE SET slots=excluded.slots,
			   heartbeat_at=excluded.heartbeat_at, expires_at=excluded.expires_at`,
			studyID, h.ID, h.Host, h.PID, slots, now.UnixNano(), now.UnixNano(), now.Add(ttl).UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("register worker: %w", err)
	}
	return nil
}

// Heartbeat extends worker h's registration and the leases of the trials
// it is evaluating by ttl from now. A worker whose registration was
// removed (it was declared dead) is registered again.
func (d *DB) Heartbeat(ctx context.Context, studyID int64, h Holder, slots int, ttl time.Duration) error {
	err := d.queueTx(ctx, "heartbeat", func(tx *sqlTx) error {
		now := time.Now()
		exp := now.Add(ttl).UnixNano()
		if _, err := tx.ExecContext(ctx,
			`UPDATE trials SET lease_expires=? WHERE study_id=? AND holder=? AND status='running'`,
			exp, studyID, h.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx,
			`INSERT INTO workers(study_id, holder, host, pid, slots, started_at, heartbeat_at, expires_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			 ON CONFLICT(study_id, holder) DO UPDATE SET heartbeat_at=excluded.heartbeat_at, expires_at=excluded.expires_at`,
			studyID, h.ID, h.Host, h.PID, slots, now.UnixNano(), now.UnixNano(), exp)
		return err
	})
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// UnregisterWorker removes worker h from the study (its running trials, if
// any, go back to the queue at the next ReclaimTrials).
func (d *DB) UnregisterWorker(ctx context.Context, studyID int64, h Holder) error {
	err := d.queueTx(ctx, "unregister worker", func(tx *sqlTx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM workers WHERE study_id=? AND holder=?`, studyID, h.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx,
			`UPDATE trials SET lease_expires=0 WHERE study_id=? AND holder=? AND status='running'`, studyID, h.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("unregister worker: %w", err)
	}
	return nil
}

// Workers returns the study's live workers (registration not expired, and
// on this host, process alive).
func (d *DB) Workers(ctx context.Context, studyID int64) ([]WorkerInfo, error) {
	if d.version.Load() < 4 {
		return nil, nil
	}
	rows, err := d.db.QueryContext(ctx,
		`SELECT holder, host, pid, slots, started_at, expires_at FROM workers WHERE study_id=? ORDER BY started_at`, studyID)
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", d.classify(err))
	}
	defer rows.Close()
	me := NewHolder()
	now := time.Now()
	var out []WorkerInfo
	for rows.Next() {
		var w WorkerInfo
		var started, expires int64
		if err := rows.Scan(&w.ID, &w.Host, &w.PID, &w.Slots, &started, &expires); err != nil {
			return nil, fmt.Errorf("list workers: %w", d.classify(err))
		}
		w.Started, w.Expires = time.Unix(0, started), time.Unix(0, expires)
		r := leaseRow{host: w.Host, pid: w.PID, expiresNano: expires}
		if !r.takeable(me, now) {
			out = append(out, w)
		}
	}
	return out, d.classify(rows.Err())
}

// WorkerRegistered reports whether the study has a worker registration,
// live or expired, for the process pid on host.
func (d *DB) WorkerRegistered(ctx context.Context, studyID int64, host string, pid int) (bool, error) {
	if d.version.Load() < 4 {
		return false, nil
	}
	var n int
	err := d.db.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM workers WHERE study_id=? AND host=? AND pid=?`, studyID, host, pid).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("find worker %s:%d: %w", host, pid, d.classify(err))
	}
	return n > 0, nil
}

// LeaseTrial takes the oldest pending trial for worker h: it becomes
// running, with one more attempt, leased until now + ttl. It returns nil
// when the queue is empty.
func (d *DB) LeaseTrial(ctx context.Context, studyID int64, h Holder, ttl time.Duration) (*Trial, error) {
	var out *Trial
	err := d.queueTx(ctx, "lease trial", func(tx *sqlTx) error {
		out = nil
		var id int
		err := tx.QueryRowContext(ctx,
			`SELECT id FROM trials WHERE study_id=? AND status='pending' ORDER BY id LIMIT 1`+d.dl.skipLocked(),
			studyID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		now := time.Now()
		t := Trial{ID: id, Status: Running, StartedAt: now, Worker: h.Name()}
		var x, u string
		if err := tx.QueryRowContext(ctx,
			`UPDATE trials SET status='running', attempts=attempts+1, worker=?, holder=?, lease_expires=?, started_at=?
			 WHERE study_id=? AND id=? RETURNING iteration, batch_index, x, u, attempts`,
			h.Name(), h.ID, now.Add(ttl).UnixNano(), now.UnixNano(), studyID, id).
			Scan(&t.Iteration, &t.Index, &x, &u, &t.Attempts); err != nil {
			return err
		}
		// A new attempt: what an earlier one reported (ReportLeased) goes.
		if _, err := tx.ExecContext(ctx, `DELETE FROM intermediates WHERE study_id=? AND trial_id=?`, studyID, id); err != nil {
			return err
		}
		if t.X, err = decodeFloats(x); err != nil {
			return fmt.Errorf("trial %d: x: %w", id, err)
		}
		if t.U, err = decodeFloats(u); err != nil {
			return fmt.Errorf("trial %d: u: %w", id, err)
		}
		out = &t
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lease trial: %w", err)
	}
	return out, nil
}

// ReportTrial records the outcome of trial t (Status Complete with a
// finite Value, or Failed with an Error) that worker h leased. When the
// lease is no longer h's (it expired and the trial was reclaimed, or it
// was finished), the outcome is kept as an attempt in trial_attempts and
// accepted is false: a trial never gets a second value. A failure with
// attempts left (t.Attempts < maxAttempts) returns the trial to the queue.
func (d *DB) ReportTrial(ctx context.Context, studyID int64, h Holder, t *Trial, maxAttempts int) (accepted bool, err error) {
	if !t.Status.Done() {
		return false, fmt.Errorf("report trial %d: status %q is not final", t.ID, t.Status)
	}
	var value any
	if t.Status.hasValue() {
		if math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
			return false, fmt.Errorf("report trial %d: value %v is not finite", t.ID, t.Value)
		}
		value = t.Value
	}
	if err := checkIntermediates(t); err != nil {
		return false, fmt.Errorf("report trial %d: %w", t.ID, err)
	}
	var meta any
	if len(t.Meta) > 0 {
		b, err := json.Marshal(t.Meta)
		if err != nil {
			return false, fmt.Errorf("report trial %d: meta: %w", t.ID, err)
		}
		meta = string(b)
	}
	outputs, err := encodeOutputs(t)
	if err != nil {
		return false, fmt.Errorf("report trial %d: %w", t.ID, err)
	}
	if t.FinishedAt.IsZero() {
		t.FinishedAt = time.Now()
	}
	errText := CleanError(t.Error)
	err = d.queueTx(ctx, "report trial", func(tx *sqlTx) error {
		accepted = false
		var res sql.Result
		var err error
		if t.Status == Failed && t.Attempts < maxAttempts {
			res, err = tx.ExecContext(ctx,
				`UPDATE trials SET status='pending', holder='', lease_expires=NULL, error=?
				 WHERE study_id=? AND id=? AND status='running' AND holder=?`,
				errText, studyID, t.ID, h.ID)
		} else {
			res, err = tx.ExecContext(ctx,
				`UPDATE trials SET status=?, value=?, error=?, finished_at=?, eval_seconds=?, meta=?, outputs=?, lease_expires=NULL
				 WHERE study_id=? AND id=? AND status='running' AND holder=?`,
				string(t.Status), value, errText, t.FinishedAt.UnixNano(), t.EvalSeconds, meta, outputs, studyID, t.ID, h.ID)
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 1 {
			accepted = true
			if t.Status == Failed && t.Attempts < maxAttempts {
				return addAttempt(ctx, tx, studyID, t.ID, t.Attempts, h.Name(), "failed", nil, errText)
			}
			return writeIntermediates(ctx, tx, studyID, t)
		}
		// Already recorded by this very call (a commit whose answer was lost
		// to a broken connection, then retried)?
		var status, holder string
		var v sql.NullFloat64
		if err := tx.QueryRowContext(ctx, `SELECT status, holder, value FROM trials WHERE study_id=? AND id=?`,
			studyID, t.ID).Scan(&status, &holder, &v); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("trial %d: %w", t.ID, ErrNotFound)
			}
			return err
		}
		if holder == h.ID && status == string(t.Status) && (t.Status == Failed || v.Float64 == t.Value) {
			accepted = true
			return nil
		}
		return addAttempt(ctx, tx, studyID, t.ID, t.Attempts, h.Name(), "late", value, errText)
	})
	if err != nil {
		return false, fmt.Errorf("report trial %d: %w", t.ID, err)
	}
	return accepted, nil
}

func addAttempt(ctx context.Context, tx *sqlTx, studyID int64, trial, attempt int, worker, outcome string, value any, msg string) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO trial_attempts(study_id, trial_id, attempt, worker, outcome, value, error, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		studyID, trial, attempt, worker, outcome, value, msg, time.Now().UnixNano())
	return err
}

// ReclaimTrials returns to the queue the running trials whose workers are
// gone — their leases expired, or they ran on this host and their process
// no longer exists — and fails those that have used maxAttempts attempts
// with "worker lost". It also removes the registrations of dead workers.
// It returns how many trials it reclaimed or failed.
func (d *DB) ReclaimTrials(ctx context.Context, studyID int64, maxAttempts int) (int, error) {
	me := NewHolder()
	n := 0
	// Unlike the other queue writes, a reclaim does not wait out an
	// unreachable server: run the moment it comes back, it would count
	// the outage against every worker's lease and take the trials of live
	// workers, which have not yet renewed them.
	err := d.queueTxFor(ctx, "reclaim trials", false, func(tx *sqlTx) error {
		n = 0
		now := time.Now()
		rows, err := tx.QueryContext(ctx,
			`SELECT t.id, t.attempts, t.worker, coalesce(t.lease_expires, 0), coalesce(w.host, ''), coalesce(w.pid, 0)
			 FROM trials t LEFT JOIN workers w ON w.study_id=t.study_id AND w.holder=t.holder
			 WHERE t.study_id=? AND t.status='running' ORDER BY t.id`+d.dl.skipLockedOf("t"), studyID)
		if err != nil {
			return err
		}
		type lost struct {
			id, attempts int
			worker       string
		}
		var gone []lost
		for rows.Next() {
			var l lost
			var r leaseRow
			if err := rows.Scan(&l.id, &l.attempts, &l.worker, &r.expiresNano, &r.host, &r.pid); err != nil {
				rows.Close()
				return err
			}
			if r.takeable(me, now) {
				gone = append(gone, l)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, l := range gone {
			msg := fmt.Sprintf("worker lost: %s stopped renewing its lease (attempt %d of %d)", l.worker, l.attempts, maxAttempts)
			q := `UPDATE trials SET status='pending', holder='', lease_expires=NULL, error=? WHERE study_id=? AND id=? AND status='running'`
			if l.attempts >= maxAttempts {
				q = `UPDATE trials SET status='failed', holder='', lease_expires=NULL, error=?, finished_at=` +
					fmt.Sprint(now.UnixNano()) + ` WHERE study_id=? AND id=? AND status='running'`
			}
			if _, err := tx.ExecContext(ctx, q, msg, studyID, l.id); err != nil {
				return err
			}
			if err := addAttempt(ctx, tx, studyID, l.id, l.attempts, l.worker, "lost", nil, msg); err != nil {
				return err
			}
			n++
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM workers WHERE study_id=? AND expires_at < ?`, studyID, now.UnixNano())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reclaim trials: %w", err)
	}
	return n, nil
}

// skipLockedOf is skipLocked for a join, locking only table alias's rows.
func (dl dialect) skipLockedOf(alias string) string {
	if dl == dialectPostgres {
		return " FOR UPDATE OF " + alias + " SKIP LOCKED"
	}
	return ""
}

// QueueCounts returns how many of the study's trials are pending, running
// and finished (complete or failed).
func (d *DB) QueueCounts(ctx context.Context, studyID int64) (pending, running, finished int, err error) {
	rows, err := d.db.QueryContext(ctx, `SELECT status, count(*) FROM trials WHERE study_id=? GROUP BY status`, studyID)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("count trials: %w", d.classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return 0, 0, 0, fmt.Errorf("count trials: %w", d.classify(err))
		}
		switch Status(s) {
		case Pending:
			pending = n
		case Running:
			running = n
		default:
			finished += n
		}
	}
	return pending, running, finished, d.classify(rows.Err())
}

// Attempt is an evaluation attempt that did not give its trial the
// outcome: the worker was lost, it reported after losing its lease
// ("late": its value is kept here, not in the trial), or it failed with
// attempts left.
type Attempt struct {
	Trial, Attempt int
	Worker         string
	Outcome        string // lost, late or failed
	Value          *float64
	Error          string
	At             time.Time
}

// Attempts returns the study's extra attempts in the order they happened.
func (d *DB) Attempts(ctx context.Context, studyID int64) ([]Attempt, error) {
	if d.version.Load() < 4 {
		return nil, nil
	}
	rows, err := d.db.QueryContext(ctx,
		`SELECT trial_id, attempt, worker, outcome, value, error, at FROM trial_attempts WHERE study_id=? ORDER BY at, trial_id`, studyID)
	if err != nil {
		return nil, fmt.Errorf("load attempts: %w", d.classify(err))
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		var a Attempt
		var v sql.NullFloat64
		var at int64
		if err := rows.Scan(&a.Trial, &a.Attempt, &a.Worker, &a.Outcome, &v, &a.Error, &at); err != nil {
			return nil, fmt.Errorf("load attempts: %w", d.classify(err))
		}
		if v.Valid {
			a.Value = &v.Float64
		}
		a.At = time.Unix(0, at)
		out = append(out, a)
	}
	return out, d.classify(rows.Err())
}
