// Package store keeps tesbo studies in an embedded SQLite database (the
// pure-Go modernc.org/sqlite driver, WAL mode). One file holds any number of
// studies, each identified by name; a study row records its configuration and
// every trial (the point in native units and in the unit cube, status, value,
// error, timings, metadata) plus one row per BO iteration with the fitted
// model's hyper-parameters and the iteration's output record, which is what
// the host needs to continue a study exactly where it stopped.
//
// Durability: each write is its own transaction, committed before the call
// returns, so a completed evaluation is on disk before the host proposes the
// next batch. The default synchronous=NORMAL survives a crash or kill of the
// process (the committed WAL frames are in the operating system's cache);
// Options.Durable selects synchronous=FULL, which also survives power loss at
// the cost of an fsync per commit.
//
// A DB is safe for concurrent use by many goroutines and many studies; other
// processes may use the same file (SQLite's locking with a busy timeout
// serializes writers).
//
// # One interface, three stores
//
// Storage is everything the host and the web viewer do with a study
// database; DB implements it for SQLite and PostgreSQL with one SQL code,
// and Memory (NewMemory) in this process's memory, for embedding and
// tests. A conformance suite runs the same calls on all three and compares
// what they return.
//
// # A locked database
//
// Another program may hold the write lock for longer than the busy timeout
// (a backup, an interactive sqlite3 session). The writes a running study
// makes — its proposals (AddBatch), trial starts and outcomes
// (StartTrial, FinishTrial), iteration records (SetRecord) and lease
// renewals — then retry with exponential backoff (50 ms doubling to 2 s)
// for up to Options.BusyRetry (5 min by default), logging a warning with
// the time waited before each retry, so that a finished evaluation's
// value is not lost to a lock. A failed attempt wrote nothing, so the
// retry is safe. Writes made before any work (creating a study, changing
// its settings, taking its lease) fail at once with ErrLocked instead.
//
// # Leases
//
// Two processes must not run one study at once: each would re-run the
// other's in-flight trials and the loser would fail on a conflict, wasting
// evaluations. A study is therefore written only under its lease, one row
// of the leases table per (study, scope) naming the holder — a random
// token per holder, with its host name and PID so that a person can find
// it — and when it acquired the lease, when it last renewed it (the
// heartbeat) and when the lease expires (heartbeat + TTL). AcquireLease
// takes a free lease, refuses a live holder's with a *LeaseHeldError, and
// takes over a holder that is gone: its lease expired (it stopped renewing:
// crashed on another host, hung, or lost the database), or it ran on this
// host and its process no longer exists (kill -9; a resume need not wait
// for the TTL). The holder renews the lease well within the TTL and
// releases it when done.
//
// A lease also fences the holder's writes: through Lease.Storage every write
// transaction first checks, in the same transaction, that the lease still
// names its holder, so a holder that hung past its TTL and was taken over
// fails with ErrLeaseLost instead of overwriting the new holder's work.
//
// The design is meant to grow: the scope column leaves room for finer
// leases (one per trial, for many workers sharing a study, with 'study'
// kept for the proposer); holder IDs are opaque tokens, not PIDs, so
// holders need not be processes; and the acquire/renew/fence steps are
// single-row conditional writes that map onto any SQL database (e.g.
// SELECT … FOR UPDATE or an UPDATE … WHERE holder = ? in PostgreSQL).
// Expiry compares times written by different hosts, so their clocks must
// agree to well within the TTL; the dead-process shortcut compares host
// names and trusts PIDs only on the holder's own host, so containers that
// share a database file need distinct host names (their PIDs live in
// separate namespaces).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SchemaVersion is the schema this package writes. Older databases are
// migrated on Open (or by Migrate, with Options.DeferMigration); newer ones
// are refused.
const SchemaVersion = 6

// Errors callers can test for with errors.Is.
var (
	// ErrNotFound: no study of that name, or no such trial.
	ErrNotFound = errors.New("not found")
	// ErrExists: a study of that name already exists.
	ErrExists = errors.New("already exists")
	// ErrNewerSchema: the file was written by a newer tesbo.
	ErrNewerSchema = errors.New("database written by a newer tesbo")
	// ErrNotTesbo: the file is not a tesbo study database.
	ErrNotTesbo = errors.New("not a tesbo study database")
	// ErrLocked: another process holds the database lock past the busy
	// timeout (and, for the writes that retry, past Options.BusyRetry).
	ErrLocked = errors.New("database is locked by another process")
	// ErrCorrupt: SQLite reports the file as malformed.
	ErrCorrupt = errors.New("database file is corrupt")
	// ErrConflict: the study was changed concurrently (e.g. two writers of
	// one study that bypass its lease).
	ErrConflict = errors.New("study modified concurrently")
	// ErrNeedsMigration: a write to a database opened with
	// Options.DeferMigration whose older schema Migrate has not upgraded.
	ErrNeedsMigration = errors.New("database has an older schema: call Migrate before writing")
	// ErrReadOnly: a write to a database opened with Options.ReadOnly.
	ErrReadOnly = errors.New("database opened read-only")
)

// Options configure Open. The zero value opens an existing database with a
// 5 s busy timeout, 5 min of retries for a running study's writes, no
// logging and synchronous=NORMAL.
type Options struct {
	// Create allows Open to create the file when it does not exist.
	Create bool
	// BusyTimeout is how long a statement waits for another connection's
	// lock before failing with ErrLocked. Zero means 5 s.
	BusyTimeout time.Duration
	// Durable selects synchronous=FULL (survives power loss) instead of
	// NORMAL (survives process crashes).
	Durable bool
	// DeferMigration leaves an existing database with an older schema as it
	// is (not migrated, journal mode unchanged) until Migrate is called, so
	// that a caller can read it — does the study exist? — and reject bad
	// input without having written anything. Meanwhile the read methods
	// see the old schema's data (a study, its trials; no iteration rows
	// before version 2) and writes fail with ErrNeedsMigration. A file Open
	// creates gets the current schema at once (there is nothing to keep).
	DeferMigration bool
	// ReadOnly opens the database for reading only (the 'trials' and
	// 'serve' commands): nothing is created or migrated, and every write
	// fails with ErrReadOnly. A SQLite file can then be read from a
	// read-only directory or mount too: see openSQLiteReadOnly for how
	// (where nothing can be written next to it, changes other processes
	// make while it is open may not be seen; a warning says so). A
	// PostgreSQL session gets default_transaction_read_only. ReadOnly
	// implies DeferMigration and excludes Create.
	ReadOnly bool
	// BusyRetry is how long the writes of a running study (AddBatch,
	// StartTrial, FinishTrial, SetRecord, Lease.Renew) keep retrying while
	// another connection holds the write lock, with backoff from 50 ms
	// doubling to 2 s between attempts, before failing with ErrLocked.
	// SQLite's busy timeout alone gives up after BusyTimeout, which would
	// drop a finished evaluation's value whenever another program (a
	// backup, a long query) holds the lock for longer. Zero means 5 min;
	// negative, no retries. Creating a study, changing its settings and
	// taking its lease do not retry: they fail fast, before any work.
	BusyRetry time.Duration
	// RetryConnect makes OpenContext wait for a PostgreSQL server it cannot
	// reach (down, restarting, the network cut) as a running study's writes
	// do: retrying with backoff from 50 ms doubling to 2 s for up to
	// BusyRetry, a warning per retry, until ctx ends. Without it Open fails
	// at once with ErrUnavailable. The commands that join a study (worker,
	// run and resume) set it, so a worker started while the server
	// restarts waits for it like the workers already running.
	RetryConnect bool
	// Logger receives a warning for each retried write, with the time spent
	// waiting so far (zero value: discard).
	Logger zerolog.Logger
}

// Defaults of Options.
const (
	DefaultBusyTimeout = 5 * time.Second
	DefaultBusyRetry   = 5 * time.Minute
)

// DB is an open study database. Lease.Storage returns a view of the same
// connection pool whose writes are fenced by a lease; Close either closes
// both.
type DB struct {
	*conn
	// fence, when set, must still hold its study for a write to commit.
	fence *dbLease
}

// conn is what every view of one open database shares.
type conn struct {
	db   *sqlDB
	dl   dialect
	path string // the file, or the PostgreSQL URL without its password
	// version is the schema version as this handle found or made it
	// (below SchemaVersion only while a deferred migration is pending).
	version   atomic.Int64
	migrateMu sync.Mutex
	busyRetry time.Duration
	// busyTimeout is SQLite's busy timeout, which walMode also waits.
	busyTimeout time.Duration
	log         zerolog.Logger
	readOnly    bool // opened with Options.ReadOnly: writes fail with ErrReadOnly
	// unavailableAt is when a call through this handle last failed with
	// ErrUnavailable (Unix nanoseconds; 0: never).
	unavailableAt atomic.Int64
}

// LastUnavailable returns when a call through this handle last found the
// database server unreachable (the zero time if none has). A worker takes
// it as a sign that the other workers may have been cut off too, and
// gives them a lease's time to renew theirs before it reclaims their
// trials.
func (c *conn) LastUnavailable() time.Time {
	if n := c.unavailableAt.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// noteUnavailable records err's time when it is ErrUnavailable, and
// returns err.
func (c *conn) noteUnavailable(err error) error {
	if errors.Is(err, ErrUnavailable) {
		c.unavailableAt.Store(time.Now().UnixNano())
	}
	return err
}

// sqliteHeader is the first 16 bytes of every SQLite 3 database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// busy returns BusyTimeout and BusyRetry with their documented defaults
// applied (zero: the default; a negative BusyRetry: no retries).
func (o Options) busy() (timeout, retry time.Duration) {
	timeout, retry = o.BusyTimeout, o.BusyRetry
	if timeout <= 0 {
		timeout = DefaultBusyTimeout
	}
	switch {
	case retry == 0:
		retry = DefaultBusyRetry
	case retry < 0:
		retry = 0
	}
	return timeout, retry
}

// Open opens (and with o.Create, creates) the study database at path,
// checking that it is a tesbo database of a schema version this package
// understands and migrating an older schema (unless o.DeferMigration). It
// writes nothing to a file it rejects.
//
// A path that is a postgres:// or postgresql:// URL opens a PostgreSQL
// database instead (see openPostgres); the database must exist, and its
// tesbo tables are created on first use.
func Open(path string, o Options) (*DB, error) {
	return OpenContext(context.Background(), path, o)
}

// OpenContext is Open, with ctx ending the wait of Options.RetryConnect.
func OpenContext(ctx context.Context, path string, o Options) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("open study db: empty path")
	}
	if IsPostgresURL(path) {
		return openPostgres(ctx, path, o)
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open study db %s: path must not contain '?' or '#'", path)
	}
	if o.ReadOnly {
		return openSQLiteReadOnly(path, o)
	}
	fresh, err := checkFile(path, o.Create)
	if err != nil {
		return nil, err
	}
	if fresh {
		if err := createSQLite(path, o); err != nil {
			return nil, fmt.Errorf("open study db %s: %w", path, err)
		}
	}
	d, err := openSQLite(path, o, false)
	if err != nil {
		return nil, fmt.Errorf("open study db %s: %w", path, err)
	}
	return d, nil
}

// Path returns the file the database was opened from.
func (d *DB) Path() string { return d.path }

// Close closes the database; a clean close checkpoints the WAL.
func (d *DB) Close() error { return d.db.Close() }

// init validates the schema and creates or migrates it, unless the
// migration of an existing file is deferred.
func (d *DB) init(fresh, deferMigration bool) error {
	ctx := context.Background()
	// Read-only checks first, so a rejected file is never written.
	nTables, err := d.dl.countTables(ctx, d.db)
	if err != nil {
		return d.classify(err)
	}
	version := 0
	if nTables > 0 {
		has, err := d.dl.hasTable(ctx, d.db, "tesbo_meta")
		if err != nil {
			return d.classify(err)
		}
		if !has {
			return fmt.Errorf("%w (it holds other tables)", ErrNotTesbo)
		}
		var v string
		err = d.db.QueryRowContext(ctx, `SELECT value FROM tesbo_meta WHERE key='schema_version'`).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w (no schema version)", ErrNotTesbo)
		}
		if err != nil {
			return d.classify(err)
		}
		if _, err := fmt.Sscan(v, &version); err != nil {
			return fmt.Errorf("%w (bad schema version %q)", ErrNotTesbo, v)
		}
		if version > SchemaVersion {
			return fmt.Errorf("%w: schema version %d, this tesbo understands up to %d; upgrade tesbo", ErrNewerSchema, version, SchemaVersion)
		}
	}
	d.version.Store(int64(version))
	switch {
	case d.readOnly:
		return nil // read as found, whatever its schema version
	case version == SchemaVersion:
		// Current schema: only make sure of WAL mode (a no-op for a file
		// tesbo created).
		return d.walMode(ctx)
	case deferMigration && !fresh:
		return nil
	}
	return d.upgrade(ctx)
}

// Migrate switches the database to WAL mode and upgrades an older schema to
// SchemaVersion (data kept). Open does it unless Options.DeferMigration;
// then the caller calls Migrate once it has decided to write. It does
// nothing when the schema is current and is safe to call concurrently.
func (d *DB) Migrate(ctx context.Context) error {
	if err := d.upgrade(ctx); err != nil {
		return fmt.Errorf("migrate study db %s: %w", d.path, err)
	}
	return nil
}

// MigrationPending reports whether the database was opened with
// Options.DeferMigration and still has an older schema (writes then fail
// with ErrNeedsMigration until Migrate).
func (d *DB) MigrationPending() bool { return d.version.Load() < SchemaVersion }

// upgrade is Migrate without the error context (Open adds its own).
func (d *DB) upgrade(ctx context.Context) error {
	if d.readOnly {
		return ErrReadOnly
	}
	d.migrateMu.Lock()
	defer d.migrateMu.Unlock()
	if d.version.Load() >= SchemaVersion {
		return nil
	}
	if err := d.walMode(ctx); err != nil {
		return err
	}
	if err := d.migrate(ctx, SchemaVersion); err != nil {
		return err
	}
	d.version.Store(SchemaVersion)
	return nil
}

// walMode switches a SQLite database to WAL mode (nothing under
// PostgreSQL). Two handles switching one file at once deadlock, and SQLite
// then fails one at once rather than calling its busy handler, so that one
// retries (retryFor) for up to the busy timeout.
func (d *DB) walMode(ctx context.Context) error {
	if d.dl == dialectPostgres {
		return nil
	}
	return d.retryFor(ctx, d.busyTimeout, "setup", "journal_mode=WAL", func() error {
		_, err := d.db.ExecContext(ctx, `PRAGMA journal_mode=WAL`)
		return classify(err)
	})
}

// classify maps the database's errors to this package's sentinel errors.
func (c *conn) classify(err error) error {
	if err == nil {
		return nil
	}
	if c.dl == dialectPostgres {
		return c.noteUnavailable(classifyPG(err))
	}
	return classify(err)
}

// classify maps SQLite error codes to this package's sentinel errors.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("%w: %v", ErrLocked, err)
		case sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w: %v", ErrNotTesbo, err)
		case sqlite3.SQLITE_CONSTRAINT:
			return fmt.Errorf("%w: %v", ErrConflict, err)
		}
	}
	return err
}

// tx runs f in one write transaction and commits it (refusing while a
// deferred migration is pending). Through a lease's view (Lease.Storage) the
// transaction first checks that the lease still holds its study, so a
// holder that lost its lease cannot write after the new holder started.
func (d *DB) tx(ctx context.Context, f func(*sqlTx) error) error {
	if v := d.version.Load(); v < SchemaVersion {
		return fmt.Errorf("%w (schema version %d, current %d)", ErrNeedsMigration, v, SchemaVersion)
	}
	if d.fence == nil {
		return d.rawTx(ctx, f)
	}
	return d.rawTx(ctx, func(tx *sqlTx) error {
		if err := d.fence.check(ctx, tx); err != nil {
			return err
		}
		return f(tx)
	})
}

// Backoff between the attempts of a retried write.
const (
	minBusyBackoff = 50 * time.Millisecond
	maxBusyBackoff = 2 * time.Second
)

// retryTx is tx for the writes of a running study: while another
// connection holds the write lock past the busy timeout it tries again,
// with exponential backoff and a warning per wait, for up to
// Options.BusyRetry. A failed attempt wrote nothing (SQLite rolled it
// back), so f runs again from the start.
func (d *DB) retryTx(ctx context.Context, what string, f func(*sqlTx) error) error {
	return d.retry(ctx, "write", what, func() error { return d.tx(ctx, f) })
}

// retry runs try until it succeeds or fails for another reason than a
// locked or unreachable database, as retryTx. kind names what is retried
// in the warnings ("write", or "connection" for Options.RetryConnect).
func (d *DB) retry(ctx context.Context, kind, what string, try func() error) error {
	return d.retryFor(ctx, d.busyRetry, kind, what, try)
}

// retryFor is retry for up to limit instead of Options.BusyRetry.
func (d *DB) retryFor(ctx context.Context, limit time.Duration, kind, what string, try func() error) error {
	start := time.Now()
	wait := minBusyBackoff
	for {
		err := d.noteUnavailable(try())
		var final unretried
		if errors.As(err, &final) {
			return final.error
		}
		if err == nil || !(errors.Is(err, ErrLocked) || errors.Is(err, ErrUnavailable)) || ctx.Err() != nil {
			return err
		}
		waited := time.Since(start)
		if waited+wait > limit {
			if limit == 0 {
				return err
			}
			if errors.Is(err, ErrUnavailable) {
				return fmt.Errorf("%w (still unavailable after %v of retries)", err, waited.Round(time.Millisecond))
			}
			return fmt.Errorf("%w (still locked after %v of retries)", err, waited.Round(time.Millisecond))
		}
		msg := "database locked by another connection; retrying the " + kind
		if errors.Is(err, ErrUnavailable) {
			msg = "database server unavailable; retrying the " + kind
		}
		d.log.Warn().Str(kind, what).Str("db", d.path).Dur("waited", waited).Dur("retry_in", wait).Msg(msg)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait = min(2*wait, maxBusyBackoff)
	}
}

// unretried marks an error retryFor returns at once (unwrapped) although
// it is one it would retry.
type unretried struct{ error }

func (u unretried) Unwrap() error { return u.error }

// rawTx is tx without the schema check (for the migration itself).
func (d *DB) rawTx(ctx context.Context, f func(*sqlTx) error) error {
	return d.runTx(ctx, true, f)
}

// runTx runs f in a transaction and commits it; serialized takes
// PostgreSQL's database-wide write lock first (see sqlDB.begin).
func (d *DB) runTx(ctx context.Context, serialized bool, f func(*sqlTx) error) error {
	if d.readOnly {
		return fmt.Errorf("study db %s: %w", d.path, ErrReadOnly)
	}
	tx, err := d.db.begin(ctx, serialized)
	if err != nil {
		return d.classify(err)
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return d.classify(err)
	}
	return d.classify(tx.Commit())
}
