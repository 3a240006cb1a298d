package host

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/internal/storebridge"
	"github.com/tesbo/tesbo/store"
)

// Storage is where studies are kept: a SQLite file, a PostgreSQL database
// (OpenStorage) or this process's memory (MemoryStorage). One Storage holds
// any number of studies by name; Options.DB names the one a study lives in.
// It is the host's handle on package store, whose types the host does not
// export: trials come out as host Trials, and the errors callers test for
// are this package's (ErrNotFound, *LeaseHeldError, ...).
type Storage struct {
	s store.Storage
}

// StorageOptions configure OpenStorage. The zero value opens an existing
// database for reading and writing with store's defaults.
type StorageOptions struct {
	// Create allows creating a SQLite file that does not exist.
	Create bool
	// ReadOnly opens the database for reading only: nothing is created or
	// migrated, and writes fail.
	ReadOnly bool
	// DeferMigration leaves an older schema as it is until a study is
	// written (so that bad input is refused before anything is written).
	DeferMigration bool
	// RetryConnect waits for a PostgreSQL server that cannot be reached
	// (down, restarting) instead of failing at once.
	RetryConnect bool
	// Durable makes each SQLite commit survive power loss (an fsync each).
	Durable bool
	// BusyTimeout is how long a statement waits for another connection's
	// lock (0: 5 s); BusyRetry how long a running study's writes keep
	// retrying (0: 5 min; negative: no retries).
	BusyTimeout, BusyRetry time.Duration
	// Logger receives a warning for each retried write.
	Logger zerolog.Logger
}

// OpenStorage opens the study database target: a SQLite file path or a
// postgres:// (postgresql://) URL.
func OpenStorage(ctx context.Context, target string, o StorageOptions) (*Storage, error) {
	db, err := store.OpenContext(ctx, target, store.Options{Create: o.Create, ReadOnly: o.ReadOnly,
		DeferMigration: o.DeferMigration, RetryConnect: o.RetryConnect, Durable: o.Durable,
		BusyTimeout: o.BusyTimeout, BusyRetry: o.BusyRetry, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	return &Storage{s: db}, nil
}

// MemoryStorage returns an empty Storage in this process's memory: studies
// kept in it behave as in a database (leases, the worker queue) and are
// gone when the process ends.
func MemoryStorage() *Storage { return &Storage{s: store.NewMemory()} }

func init() {
	storebridge.Wrap = func(db store.Storage) any { return &Storage{s: db} }
	storebridge.Unwrap = func(st any) store.Storage { return st.(*Storage).store() }
}

// store returns the database behind st (nil for a nil st: no database).
func (st *Storage) store() store.Storage {
	if st == nil {
		return nil
	}
	return st.s
}

// errNoStorage is the error for a nil or zero-value *Storage.
var errNoStorage = errors.New("no storage: a *Storage comes from OpenStorage or MemoryStorage (this one is nil or a zero value)")

// checkStorage refuses a nil or zero-value *Storage, which would
// otherwise panic at the first read.
func checkStorage(st *Storage) error {
	if st.store() == nil {
		return errNoStorage
	}
	return nil
}

// Close closes the database.
func (st *Storage) Close() error { return st.s.Close() }

// Path names the database for people: the file, the PostgreSQL URL
// without its password, or ":memory:".
func (st *Storage) Path() string { return st.s.Path() }

// Trials returns the stored study name's trials ordered by ID (without
// Names: see Study.Trials for those). A missing study gives an error
// wrapping ErrNotFound.
func (st *Storage) Trials(ctx context.Context, name string) ([]Trial, error) {
	row, err := st.s.Study(ctx, name)
	if err != nil {
		return nil, err
	}
	return loadTrials(ctx, st.s, row.ID)
}

// IsPostgresURL reports whether target names a PostgreSQL database rather
// than a SQLite file.
func IsPostgresURL(target string) bool { return store.IsPostgresURL(target) }

// Redact returns a database target fit to print: a PostgreSQL URL's
// password replaced by xxxxx.
func Redact(target string) string { return store.Redact(target) }

// HasPassword reports whether target is a PostgreSQL URL carrying a
// password.
func HasPassword(target string) bool { return store.HasPassword(target) }

// Errors of the study database callers can test for with errors.Is.
var (
	// ErrNotFound: no study of that name.
	ErrNotFound = store.ErrNotFound
	// ErrLocked: another program holds the database's lock for too long.
	ErrLocked = store.ErrLocked
	// ErrCorrupt, ErrNotTesbo, ErrNewerSchema: the file is not a study
	// database this tesbo can read.
	ErrCorrupt     = store.ErrCorrupt
	ErrNotTesbo    = store.ErrNotTesbo
	ErrNewerSchema = store.ErrNewerSchema
	// ErrLeaseLost: another process took the study over.
	ErrLeaseLost = store.ErrLeaseLost
	// ErrUnavailable: the PostgreSQL server cannot be reached (a fault of
	// the moment, not of the input).
	ErrUnavailable = store.ErrUnavailable
)

// LeaseHeldError says that a live process holds the study (OpenStudy,
// RunWorker, Start, Resume and Join refuse with it): who, since when, and
// when its lease lapses unless renewed.
type LeaseHeldError struct {
	Study   string
	Host    string
	PID     int
	Since   time.Time
	Expires time.Time
}

func (e *LeaseHeldError) Error() string { return (*store.LeaseHeldError)(e).Error() }

// AsLeaseHeld returns the *LeaseHeldError that err carries, or nil.
func AsLeaseHeld(err error) *LeaseHeldError {
	var held *LeaseHeldError
	if errors.As(err, &held) {
		return held
	}
	var sh *store.LeaseHeldError
	if errors.As(err, &sh) {
		return (*LeaseHeldError)(sh)
	}
	return nil
}

// leaseHeldErr is an error from the store that carries a lease holder:
// its text and its chain stay as they are, and errors.As also finds the
// holder as this package's *LeaseHeldError.
type leaseHeldErr struct {
	err  error
	held *LeaseHeldError
}

func (e *leaseHeldErr) Error() string   { return e.err.Error() }
func (e *leaseHeldErr) Unwrap() []error { return []error{e.err, e.held} }

// publicErr makes an error leaving the package testable with this
// package's types (errors.As with *LeaseHeldError).
func publicErr(err error) error {
	var sh *store.LeaseHeldError
	var hh *LeaseHeldError
	if err == nil || !errors.As(err, &sh) || errors.As(err, &hh) {
		return err
	}
	return &leaseHeldErr{err: err, held: (*LeaseHeldError)(sh)}
}

// The conversion of trials between host and store.

func toStoreTrial(t Trial) store.Trial {
	return store.Trial{ID: t.ID, Iteration: t.Iteration, Index: t.Index, X: t.X, U: t.U,
		Status: store.Status(t.Status), Value: t.Value, Error: t.Error, Attempts: t.Attempts,
		CreatedAt: t.CreatedAt, StartedAt: t.StartedAt, FinishedAt: t.FinishedAt,
		EvalSeconds: t.EvalSeconds, Meta: t.Meta, Worker: t.Worker, Outputs: t.Outputs,
		Intermediates: convertIntermediates[store.Intermediate](t.Intermediates), Stopping: t.Stopping}
}

func fromStoreTrial(t store.Trial) Trial {
	return Trial{ID: t.ID, Iteration: t.Iteration, Index: t.Index, X: t.X, U: t.U,
		Status: Status(t.Status), Value: t.Value, Error: t.Error, Attempts: t.Attempts,
		CreatedAt: t.CreatedAt, StartedAt: t.StartedAt, FinishedAt: t.FinishedAt,
		EvalSeconds: t.EvalSeconds, Meta: t.Meta, Worker: t.Worker, Outputs: t.Outputs,
		Intermediates: convertIntermediates[Intermediate](t.Intermediates), Stopping: t.Stopping}
}

// convertIntermediates converts between host's and store's Intermediate
// (the same fields); nil stays nil.
func convertIntermediates[To, From ~struct {
	Step  int
	Value float64
}](in []From) []To {
	if in == nil {
		return nil
	}
	out := make([]To, len(in))
	for i, p := range in {
		out[i] = To(p)
	}
	return out
}

func fromStoreTrials(ts []store.Trial) []Trial {
	if ts == nil {
		return nil
	}
	out := make([]Trial, len(ts))
	for i, t := range ts {
		out[i] = fromStoreTrial(t)
	}
	return out
}

// loadTrials reads a study's trials as host Trials.
func loadTrials(ctx context.Context, db store.TrialStore, studyID int64) ([]Trial, error) {
	ts, err := db.Trials(ctx, studyID)
	return fromStoreTrials(ts), err
}

// addBatch is store's AddBatch for host Trials (which, as there, get their
// status and creation time).
func addBatch(ctx context.Context, db store.TrialStore, studyID int64, it store.Iteration, trials []Trial) error {
	return addTrials(ctx, db.AddBatch, studyID, it, trials)
}

// addFinished is store's AddFinished for host Trials (which get their
// creation times).
func addFinished(ctx context.Context, db store.TrialStore, studyID int64, it store.Iteration, trials []Trial) error {
	return addTrials(ctx, db.AddFinished, studyID, it, trials)
}

// addTrials hands trials to add (AddBatch or AddFinished) as store
// Trials and takes back the status and creation time it gave them.
func addTrials(ctx context.Context, add func(context.Context, int64, store.Iteration, []store.Trial) error,
	studyID int64, it store.Iteration, trials []Trial) error {
	st := make([]store.Trial, len(trials))
	for i, t := range trials {
		st[i] = toStoreTrial(t)
	}
	err := add(ctx, studyID, it, st)
	for i := range trials {
		trials[i].Status, trials[i].CreatedAt = Status(st[i].Status), st[i].CreatedAt
	}
	return err
}

// finishTrial is store's FinishTrial for a host Trial (which, as there,
// gets its finishing time when it has none).
func finishTrial(ctx context.Context, db store.TrialStore, studyID int64, t *Trial) error {
	s := toStoreTrial(*t)
	err := db.FinishTrial(ctx, studyID, &s)
	t.FinishedAt = s.FinishedAt
	return err
}

// reportTrial is store's ReportTrial for a host Trial.
func reportTrial(ctx context.Context, db store.QueueStore, studyID int64, h store.Holder, t *Trial, maxAttempts int) (bool, error) {
	s := toStoreTrial(*t)
	ok, err := db.ReportTrial(ctx, studyID, h, &s, maxAttempts)
	t.FinishedAt = s.FinishedAt
	return ok, err
}

// leaseTrial is store's LeaseTrial giving a host Trial (nil: the queue is
// empty).
func leaseTrial(ctx context.Context, db store.QueueStore, studyID int64, h store.Holder, ttl time.Duration) (*Trial, error) {
	t, err := db.LeaseTrial(ctx, studyID, h, ttl)
	if t == nil || err != nil {
		return nil, err
	}
	ht := fromStoreTrial(*t)
	return &ht, nil
}
