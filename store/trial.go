package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tesbo/tesbo/internal/safetext"
)

// Status is a trial's life-cycle state.
type Status string

// Trial states: pending (proposed, not started), running (an evaluation is
// under way), complete (Value holds the result), failed (Error says why),
// pruned (stopped early: Value is the last intermediate value, at Step).
// Pending and running trials are "in flight"; a resumed study re-runs them.
const (
	Pending  Status = "pending"
	Running  Status = "running"
	Complete Status = "complete"
	Failed   Status = "failed"
	Pruned   Status = "pruned"
)

// Done reports whether the state is final.
func (s Status) Done() bool { return s == Complete || s == Failed || s == Pruned }

// hasValue reports whether a trial in the state carries a value.
func (s Status) hasValue() bool { return s == Complete || s == Pruned }

// Trial is one proposed point and, once finished, its outcome.
type Trial struct {
	ID        int       // 0-based, unique within the study
	Iteration int       // 0 = initial design, t ≥ 1 = BO iteration t
	Index     int       // position within its iteration's batch
	X         []float64 // native units
	U         []float64 // the same point in the unit cube (what the GP sees)
	Status    Status
	Value     float64 // native units; meaningful when Status is Complete or Pruned
	// Outputs are a complete trial's values of an objective with several
	// declared outputs, in the order the objective declares them (native
	// units); nil for a single-output objective.
	Outputs     []float64
	Error       string // why it failed; empty otherwise
	Attempts    int    // evaluation attempts made (retries + 1)
	CreatedAt   time.Time
	StartedAt   time.Time // zero until started
	FinishedAt  time.Time // zero until finished
	EvalSeconds float64   // wall time of the successful (or last) attempt
	Meta        map[string]string
	// Worker is the host:pid of the worker that took the trial from the
	// queue last (see queue.go); empty for trials a single process ran.
	Worker string
	// Intermediates are the values the evaluation reported, steps
	// increasing: stored with its outcome, or as they come
	// (ReportIntermediate) while it is in flight.
	Intermediates []Intermediate
	// Stopping says that an in-flight trial's evaluation was told to stop
	// (ReportIntermediate with stop) at its last intermediate value; its
	// outcome is to be recorded as pruned. Always false once finished.
	Stopping bool
}

// Iteration is a BO iteration's row: the model fitted to propose its batch
// (host-defined JSON; nil for the initial design) and, once the batch is
// finished, the iteration's output record.
type Iteration struct {
	Iteration      int
	Model          json.RawMessage
	FitSeconds     float64
	ProposeSeconds float64
	Record         json.RawMessage
}

func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// newTrialRow checks a trial AddBatch is given (pending or running;
// Status "" means pending), stamps its creation time and encodes its
// points and metadata for storage (meta "" for none: NULL). A proposal's
// metadata (a multi-fidelity trial's step) is stored with it, so that a
// study reopened while the trial runs knows it.
func newTrialRow(t *Trial, now time.Time) (x, u, meta string, err error) {
	if t.Status == "" {
		t.Status = Pending
	}
	if t.Status.Done() {
		return "", "", "", fmt.Errorf("trial %d: new trials must be pending or running", t.ID)
	}
	if x, err = encodeFloats(t.X); err != nil {
		return "", "", "", fmt.Errorf("trial %d: x: %w", t.ID, err)
	}
	if u, err = encodeFloats(t.U); err != nil {
		return "", "", "", fmt.Errorf("trial %d: u: %w", t.ID, err)
	}
	if len(t.Meta) > 0 {
		b, err := json.Marshal(t.Meta)
		if err != nil {
			return "", "", "", fmt.Errorf("trial %d: meta: %w", t.ID, err)
		}
		meta = string(b)
	}
	t.CreatedAt = now
	return x, u, meta, nil
}

// AddBatch records iteration it (unless a row for it exists already, e.g.
// an initial design issued in several parts) and its proposed trials in one
// transaction. Trial IDs are the caller's; an ID or (iteration, index)
// already present gives an error wrapping ErrConflict.
func (d *DB) AddBatch(ctx context.Context, studyID int64, it Iteration, trials []Trial) error {
	now := time.Now()
	err := d.retryTx(ctx, "add batch", func(tx *sqlTx) error {
		return insertBatch(ctx, tx, studyID, it, trials, now)
	})
	if err != nil {
		return fmt.Errorf("add batch: %w", err)
	}
	return nil
}

// insertBatch is AddBatch's work inside transaction tx.
func insertBatch(ctx context.Context, tx *sqlTx, studyID int64, it Iteration, trials []Trial, now time.Time) error {
	var model, record any
	if it.Model != nil {
		model = string(it.Model)
	}
	if it.Record != nil {
		record = string(it.Record)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO iterations(study_id, iteration, model, fit_s, propose_s, record) VALUES (?, ?, ?, ?, ?, ?)
		 ON CONFLICT(study_id, iteration) DO NOTHING`,
		studyID, it.Iteration, model, it.FitSeconds, it.ProposeSeconds, record); err != nil {
		return fmt.Errorf("iteration %d: %w", it.Iteration, err)
	}
	stmt, err := tx.PrepareContext(ctx,
		`INSERT INTO trials(study_id, id, iteration, batch_index, x, u, status, created_at, meta)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i := range trials {
		t := &trials[i]
		x, u, meta, err := newTrialRow(t, now)
		if err != nil {
			return err
		}
		var metaArg any
		if meta != "" {
			metaArg = meta
		}
		if _, err := stmt.ExecContext(ctx, studyID, t.ID, t.Iteration, t.Index, x, u, string(t.Status), now.UnixNano(), metaArg); err != nil {
			return fmt.Errorf("trial %d: %w", t.ID, err)
		}
	}
	return nil
}

// AddFinished records iteration it (unless present) and trials that
// finished elsewhere — a warm start's imports — each with its outcome
// (as FinishTrial takes it), in one transaction: a process stopped while
// importing leaves all of them or none, never trials in flight that a
// resumed study would evaluate again.
func (d *DB) AddFinished(ctx context.Context, studyID int64, it Iteration, trials []Trial) error {
	outs := make([]finishArgs, len(trials))
	for i := range trials {
		var err error
		if outs[i], err = prepareFinish(&trials[i]); err != nil {
			return fmt.Errorf("add finished: %w", err)
		}
	}
	now := time.Now()
	err := d.retryTx(ctx, "add finished", func(tx *sqlTx) error {
		if err := insertBatch(ctx, tx, studyID, it, pendingCopies(trials), now); err != nil {
			return err
		}
		for i := range trials {
			if err := finishTx(ctx, tx, studyID, &trials[i], outs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add finished: %w", err)
	}
	for i := range trials {
		trials[i].CreatedAt = now
	}
	return nil
}

// pendingCopies returns trials as new pending rows (their outcomes aside).
func pendingCopies(trials []Trial) []Trial {
	out := make([]Trial, len(trials))
	for i, t := range trials {
		out[i] = Trial{ID: t.ID, Iteration: t.Iteration, Index: t.Index, X: t.X, U: t.U, Status: Pending, Meta: t.Meta}
	}
	return out
}

// StartTrial marks an in-flight trial running with its attempt count. The
// attempt reports its own intermediate values: those reported before
// (ReportIntermediate) are dropped.
func (d *DB) StartTrial(ctx context.Context, studyID int64, id, attempts int, at time.Time) error {
	err := d.retryTx(ctx, "start trial", func(tx *sqlTx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE trials SET status='running', attempts=?, started_at=?, step=NULL
			 WHERE study_id=? AND id=? AND status IN ('pending','running')`,
			attempts, at.UnixNano(), studyID, id)
		if err != nil {
			return err
		}
		if err := oneRow(res, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM intermediates WHERE study_id=? AND trial_id=?`, studyID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("start trial %d: %w", id, err)
	}
	return nil
}

// MaxErrorBytes bounds the error text stored with a trial (and attempt):
// a plugin's error is someone else's text, and one of 3 MiB per trial
// would bloat the database, every page showing it and every log line.
const MaxErrorBytes = 4096

// CleanError returns a trial's error text as it is stored: valid UTF-8
// without NUL bytes (PostgreSQL's text holds neither) and at most
// MaxErrorBytes long, a cut one ending in "… (N bytes cut)".
func CleanError(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", `\x00`)
	return safetext.Cap(s, MaxErrorBytes)
}

// FinishTrial records t's outcome (Status Complete with a finite Value, or
// Failed with an Error). Only an in-flight trial can finish; finishing one
// twice gives an error wrapping ErrConflict.
func (d *DB) FinishTrial(ctx context.Context, studyID int64, t *Trial) error {
	args, err := prepareFinish(t)
	if err != nil {
		return err
	}
	err = d.retryTx(ctx, "finish trial", func(tx *sqlTx) error {
		return finishTx(ctx, tx, studyID, t, args)
	})
	if err != nil {
		return fmt.Errorf("finish trial %d: %w", t.ID, err)
	}
	return nil
}

// finishArgs are an outcome's column values (nil: NULL).
type finishArgs struct{ value, meta, outputs any }

// prepareFinish checks t's outcome and encodes its columns, and gives t
// its finishing time when it has none.
func prepareFinish(t *Trial) (finishArgs, error) {
	var a finishArgs
	if !t.Status.Done() {
		return a, fmt.Errorf("finish trial %d: status %q is not final", t.ID, t.Status)
	}
	if t.Status.hasValue() {
		if math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
			return a, fmt.Errorf("finish trial %d: value %v is not finite", t.ID, t.Value)
		}
		a.value = t.Value
	}
	if err := checkIntermediates(t); err != nil {
		return a, fmt.Errorf("finish trial %d: %w", t.ID, err)
	}
	if len(t.Meta) > 0 {
		b, err := json.Marshal(t.Meta)
		if err != nil {
			return a, fmt.Errorf("finish trial %d: meta: %w", t.ID, err)
		}
		a.meta = string(b)
	}
	var err error
	if a.outputs, err = encodeOutputs(t); err != nil {
		return a, fmt.Errorf("finish trial %d: %w", t.ID, err)
	}
	if t.FinishedAt.IsZero() {
		t.FinishedAt = time.Now()
	}
	return a, nil
}

// finishTx is FinishTrial's work inside transaction tx.
func finishTx(ctx context.Context, tx *sqlTx, studyID int64, t *Trial, a finishArgs) error {
	res, err := tx.ExecContext(ctx,
		`UPDATE trials SET status=?, value=?, error=?, attempts=?, started_at=coalesce(?, started_at),
		        finished_at=?, eval_seconds=?, meta=?, outputs=?
		 WHERE study_id=? AND id=? AND status IN ('pending','running')`,
		string(t.Status), a.value, CleanError(t.Error), t.Attempts, nanos(t.StartedAt),
		t.FinishedAt.UnixNano(), t.EvalSeconds, a.meta, a.outputs, studyID, t.ID)
	if err != nil {
		return err
	}
	if err := oneRow(res, t.ID); err != nil {
		return err
	}
	return writeIntermediates(ctx, tx, studyID, t)
}

func oneRow(res sql.Result, id int) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("trial %d is not in flight (unknown or already finished): %w", id, ErrConflict)
	}
	return nil
}

// SetRecord stores the output record of a finished iteration.
func (d *DB) SetRecord(ctx context.Context, studyID int64, iteration int, record json.RawMessage) error {
	if !json.Valid(record) {
		return fmt.Errorf("set record: not JSON")
	}
	err := d.retryTx(ctx, "set record", func(tx *sqlTx) error {
		res, err := tx.ExecContext(ctx, `UPDATE iterations SET record=? WHERE study_id=? AND iteration=?`,
			string(record), studyID, iteration)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("iteration %d %w", iteration, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set record: %w", err)
	}
	return nil
}

// Trials returns the study's trials ordered by ID.
func (d *DB) Trials(ctx context.Context, studyID int64) ([]Trial, error) {
	if d.version.Load() < 1 {
		return nil, nil
	}
	worker, outputs, step := `''`, `NULL`, `NULL`
	if d.version.Load() >= 4 {
		worker = `worker`
	}
	if d.version.Load() >= 5 {
		step = `step`
	}
	if d.version.Load() >= 6 {
		outputs = `outputs`
	}
	rows, err := d.db.QueryContext(ctx,
		`SELECT id, iteration, batch_index, x, u, status, value, error, attempts,
		        created_at, started_at, finished_at, eval_seconds, meta, `+worker+`, `+outputs+`, `+step+`
		 FROM trials WHERE study_id=? ORDER BY id`, studyID)
	if err != nil {
		return nil, fmt.Errorf("load trials: %w", d.classify(err))
	}
	defer rows.Close()
	var out []Trial
	for rows.Next() {
		var t Trial
		var x, u, status string
		var value, evalS sql.NullFloat64
		var started, finished sql.NullInt64
		var created int64
		var meta, outs sql.NullString
		var step sql.NullInt64
		if err := rows.Scan(&t.ID, &t.Iteration, &t.Index, &x, &u, &status, &value, &t.Error, &t.Attempts,
			&created, &started, &finished, &evalS, &meta, &t.Worker, &outs, &step); err != nil {
			return nil, fmt.Errorf("load trials: %w", d.classify(err))
		}
		t.Status = Status(status)
		t.Stopping = step.Valid && !t.Status.Done()
		t.Value = value.Float64
		if t.Status.hasValue() && (!value.Valid || math.IsNaN(t.Value) || math.IsInf(t.Value, 0)) {
			// Every write refuses such a value: only a hand edit stores it,
			// and read as 0 (NULL) or ±Inf it was ranked and modelled.
			return nil, fmt.Errorf("load trial %d: %w: %s trial with value %v", t.ID, ErrCorrupt, t.Status, valueText(value))
		}
		t.EvalSeconds = evalS.Float64
		t.CreatedAt = time.Unix(0, created)
		if started.Valid {
			t.StartedAt = time.Unix(0, started.Int64)
		}
		if finished.Valid {
			t.FinishedAt = time.Unix(0, finished.Int64)
		}
		if t.X, err = decodeFloats(x); err != nil {
			return nil, fmt.Errorf("load trial %d: x: %w", t.ID, err)
		}
		if t.U, err = decodeFloats(u); err != nil {
			return nil, fmt.Errorf("load trial %d: u: %w", t.ID, err)
		}
		if meta.Valid && meta.String != "" {
			if err := json.Unmarshal([]byte(meta.String), &t.Meta); err != nil {
				return nil, fmt.Errorf("load trial %d: meta: %w", t.ID, err)
			}
		}
		if outs.Valid && outs.String != "" {
			if t.Outputs, err = decodeFloats(outs.String); err != nil {
				return nil, fmt.Errorf("load trial %d: outputs: %w", t.ID, err)
			}
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load trials: %w", d.classify(err))
	}
	if err := d.loadIntermediates(ctx, studyID, out); err != nil {
		return nil, fmt.Errorf("load trials: %w", err)
	}
	return out, nil
}

// Iterations returns the study's iteration rows in order (none in a
// version-1 database awaiting a deferred migration).
func (d *DB) Iterations(ctx context.Context, studyID int64) ([]Iteration, error) {
	if d.version.Load() < 2 {
		return nil, nil
	}
	rows, err := d.db.QueryContext(ctx,
		`SELECT iteration, model, fit_s, propose_s, record FROM iterations WHERE study_id=? ORDER BY iteration`, studyID)
	if err != nil {
		return nil, fmt.Errorf("load iterations: %w", d.classify(err))
	}
	defer rows.Close()
	var out []Iteration
	for rows.Next() {
		var it Iteration
		var model, record sql.NullString
		if err := rows.Scan(&it.Iteration, &model, &it.FitSeconds, &it.ProposeSeconds, &record); err != nil {
			return nil, fmt.Errorf("load iterations: %w", d.classify(err))
		}
		if model.Valid {
			it.Model = json.RawMessage(model.String)
		}
		if record.Valid {
			it.Record = json.RawMessage(record.String)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load iterations: %w", d.classify(err))
	}
	return out, nil
}

// encodeFloats writes a point as JSON; Go's shortest round-trip formatting
// makes decode(encode(x)) bitwise equal to x.
// encodeFloats encodes a point as a JSON array; NaN, an inactive
// parameter of a conditional space, is null. ±Inf is refused.
func encodeFloats(x []float64) (string, error) {
	for _, v := range x {
		if math.IsInf(v, 0) {
			return "", errors.New("coordinate is not finite")
		}
	}
	if x == nil {
		x = []float64{}
	}
	y := make([]*float64, len(x))
	for i := range x {
		if !math.IsNaN(x[i]) {
			y[i] = &x[i]
		}
	}
	b, err := json.Marshal(y)
	return string(b), err
}

// encodeOutputs returns what a finished trial stores as its outputs: its
// Outputs as encodeFloats writes them when it is complete and has any, else
// NULL.
func encodeOutputs(t *Trial) (any, error) {
	if t.Status != Complete || len(t.Outputs) == 0 {
		return nil, nil
	}
	for _, v := range t.Outputs {
		if math.IsNaN(v) { // encodeFloats keeps NaN (an inactive parameter) as null; an output must be a number
			return nil, errors.New("outputs: an output is NaN")
		}
	}
	s, err := encodeFloats(t.Outputs)
	if err != nil {
		return nil, fmt.Errorf("outputs: %w", err)
	}
	return s, nil
}

// decodeFloats decodes encodeFloats' array (null: NaN).
func decodeFloats(s string) ([]float64, error) {
	var y []*float64
	if err := json.Unmarshal([]byte(s), &y); err != nil {
		return nil, err
	}
	if y == nil {
		return nil, nil
	}
	x := make([]float64, len(y))
	for i, v := range y {
		x[i] = math.NaN()
		if v != nil {
			x[i] = *v
		}
	}
	return x, nil
}

// valueText shows a stored value: its number, or NULL.
func valueText(v sql.NullFloat64) string {
	if !v.Valid {
		return "NULL"
	}
	return strconv.FormatFloat(v.Float64, 'g', -1, 64)
}
