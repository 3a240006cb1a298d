package store

import (
	"context"
	"fmt"
	"strconv"
)

// migrations[v] upgrades a database from schema version v to v+1. Append,
// never edit: a released step must keep producing the same schema.
var migrations = []string{
	// 0 → 1: studies and trials.
	`CREATE TABLE tesbo_meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	);
	CREATE TABLE studies (
		id          INTEGER PRIMARY KEY,
		name        TEXT NOT NULL UNIQUE,
		objective   TEXT NOT NULL,
		acquisition TEXT NOT NULL,
		seed        INTEGER NOT NULL,
		space       TEXT NOT NULL,
		settings    TEXT NOT NULL,
		created_at  INTEGER NOT NULL,
		updated_at  INTEGER NOT NULL
	);
	CREATE TABLE trials (
		study_id     INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
		id           INTEGER NOT NULL,
		iteration    INTEGER NOT NULL,
		batch_index  INTEGER NOT NULL,
		x            TEXT NOT NULL,
		u            TEXT NOT NULL,
		status       TEXT NOT NULL CHECK (status IN ('pending','running','complete','failed')),
		value        REAL,
		error        TEXT NOT NULL DEFAULT '',
		attempts     INTEGER NOT NULL DEFAULT 0,
		created_at   INTEGER NOT NULL,
		started_at   INTEGER,
		finished_at  INTEGER,
		eval_seconds REAL,
		meta         TEXT,
		PRIMARY KEY (study_id, id),
		UNIQUE (study_id, iteration, batch_index)
	);`,
	// 1 → 2: one row per iteration with the fitted model (warm start on
	// resume) and the iteration's output record.
	`CREATE TABLE iterations (
		study_id   INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
		iteration  INTEGER NOT NULL,
		model      TEXT,
		fit_s      REAL NOT NULL DEFAULT 0,
		propose_s  REAL NOT NULL DEFAULT 0,
		record     TEXT,
		PRIMARY KEY (study_id, iteration)
	);`,
	// 2 → 3: leases (see lease.go). scope names what is leased: 'study'
	// for a whole study; finer scopes (one trial per worker) can share the
	// table. Times are Unix nanoseconds of the holder's clock.
	`CREATE TABLE IF NOT EXISTS leases (
		study_id     INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
		scope        TEXT NOT NULL,
		holder       TEXT NOT NULL,
		host         TEXT NOT NULL,
		pid          INTEGER NOT NULL,
		acquired_at  INTEGER NOT NULL,
		heartbeat_at INTEGER NOT NULL,
		expires_at   INTEGER NOT NULL,
		PRIMARY KEY (study_id, scope)
	);`,
	// 3 → 4: many workers on one study (see queue.go). A trial taken from
	// the queue records who evaluates it (worker: host and PID, holder:
	// its lease token) and until when (lease_expires, Unix nanoseconds);
	// workers says who is working on a study and with how many slots; an
	// attempt that ended without giving the trial its outcome (a lease
	// lost, a value reported too late) is kept in trial_attempts.
	`ALTER TABLE trials ADD COLUMN worker TEXT NOT NULL DEFAULT '';
	ALTER TABLE trials ADD COLUMN holder TEXT NOT NULL DEFAULT '';
	ALTER TABLE trials ADD COLUMN lease_expires INTEGER;
	CREATE INDEX trials_queue ON trials(study_id, status, id);
	CREATE TABLE workers (
		study_id     INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
		holder       TEXT NOT NULL,
		host         TEXT NOT NULL,
		pid          INTEGER NOT NULL,
		slots        INTEGER NOT NULL,
		started_at   INTEGER NOT NULL,
		heartbeat_at INTEGER NOT NULL,
		expires_at   INTEGER NOT NULL,
		PRIMARY KEY (study_id, holder)
	);
	CREATE TABLE trial_attempts (
		study_id   INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
		trial_id   INTEGER NOT NULL,
		attempt    INTEGER NOT NULL,
		worker     TEXT NOT NULL,
		outcome    TEXT NOT NULL,
		value      REAL,
		error      TEXT NOT NULL DEFAULT '',
		at         INTEGER NOT NULL
	);`,
	// 4 → 5: early stopping. A trial may end 'pruned' (stopped early; its
	// value is the last one it reported, at step), which the status CHECK
	// of migration 1 refuses and SQLite cannot alter: the trials table is
	// rebuilt, the same way on both dialects, with the new CHECK and a step
	// column. intermediates holds the values an evaluation reported, one
	// row per trial and step.
	`CREATE TABLE trials_v5 (
		study_id      INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
		id            INTEGER NOT NULL,
		iteration     INTEGER NOT NULL,
		batch_index   INTEGER NOT NULL,
		x             TEXT NOT NULL,
		u             TEXT NOT NULL,
		status        TEXT NOT NULL CHECK (status IN ('pending','running','complete','failed','pruned')),
		value         REAL,
		error         TEXT NOT NULL DEFAULT '',
		attempts      INTEGER NOT NULL DEFAULT 0,
		created_at    INTEGER NOT NULL,
		started_at    INTEGER,
		finished_at   INTEGER,
		eval_seconds  REAL,
		meta          TEXT,
		worker        TEXT NOT NULL DEFAULT '',
		holder        TEXT NOT NULL DEFAULT '',
		lease_expires INTEGER,
		step          INTEGER,
		PRIMARY KEY (study_id, id),
		UNIQUE (study_id, iteration, batch_index)
	);
	INSERT INTO trials_v5(study_id, id, iteration, batch_index, x, u, status, value, error, attempts,
		created_at, started_at, finished_at, eval_seconds, meta, worker, holder, lease_expires)
	SELECT study_id, id, iteration, batch_index, x, u, status, value, error, attempts,
		created_at, started_at, finished_at, eval_seconds, meta, worker, holder, lease_expires FROM trials;
	DROP TABLE trials;
	ALTER TABLE trials_v5 RENAME TO trials;
	CREATE INDEX trials_queue ON trials(study_id, status, id);
	CREATE TABLE intermediates (
		study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
		trial_id INTEGER NOT NULL,
		step     INTEGER NOT NULL,
		value    REAL NOT NULL,
		PRIMARY KEY (study_id, trial_id, step)
	);`,
	// 5 → 6: several outputs. A complete trial of an objective that
	// declares several outputs keeps them all, as a JSON array in the
	// order the objective declares them (its Info, in the study's
	// settings, names them); NULL for one output.
	`ALTER TABLE trials ADD COLUMN outputs TEXT;`,
}

func init() {
	if len(migrations) != SchemaVersion {
		panic("store: migrations and SchemaVersion disagree")
	}
}

// migrate applies the missing migrations up to version to in one transaction.
func (d *DB) migrate(ctx context.Context, to int) error {
	return d.rawTx(ctx, func(tx *sqlTx) error {
		// Re-read the version inside the write lock: another process may
		// have migrated meanwhile.
		cur := 0
		has, err := d.dl.hasTable(ctx, tx, "tesbo_meta")
		if err != nil {
			return err
		}
		if has {
			var v string
			err := tx.QueryRowContext(ctx, `SELECT value FROM tesbo_meta WHERE key='schema_version'`).Scan(&v)
			if err == nil {
				cur, _ = strconv.Atoi(v)
			}
		}
		if cur >= to {
			return nil
		}
		for v := cur; v < to; v++ {
			if _, err := tx.ExecContext(ctx, d.dl.ddl(migrations[v])); err != nil {
				return fmt.Errorf("migrate schema %d→%d: %w", v, v+1, err)
			}
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO tesbo_meta(key, value) VALUES ('schema_version', ?)
			 ON CONFLICT(key) DO UPDATE SET value=excluded.value`, strconv.Itoa(to))
		return err
	})
}
