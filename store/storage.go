package store

import (
	"context"
	"encoding/json"
	"time"
)

// Storage is a study database as the host and the web viewer use it: a
// SQLite file or a PostgreSQL database (DB, one SQL code for both), or
// memory (NewMemory) for embedding and tests. The implementations agree
// call for call — the same results, the same errors (errors.Is with this
// package's sentinels, *LeaseHeldError) — which the conformance suite in
// storage_test.go checks against all three.
//
// It is composed of the small interfaces below, so that a function can ask
// for only what it uses.
type Storage interface {
	StudyStore
	TrialStore
	QueueStore
	LeaseStore
	// Path names the database for people: the file, the PostgreSQL URL
	// without its password, or ":memory:".
	Path() string
	// MigrationPending reports whether writes wait for Migrate (a file
	// opened with Options.DeferMigration that has an older schema).
	MigrationPending() bool
	// Migrate upgrades an older schema (nothing to do when it is current).
	Migrate(ctx context.Context) error
	// Close releases the database; a Lease's Storage closes with it.
	Close() error
}

// StudyStore holds the studies: their configuration rows and a cheap
// summary of their progress.
type StudyStore interface {
	// CreateStudy inserts s, filling in its ID and timestamps; a study of
	// the same name gives an error wrapping ErrExists.
	CreateStudy(ctx context.Context, s *Study) error
	// Study loads the study called name (ErrNotFound when there is none).
	Study(ctx context.Context, name string) (*Study, error)
	// StudyNames lists the studies, oldest first.
	StudyNames(ctx context.Context) ([]string, error)
	// UpdateSettings replaces a study's settings document.
	UpdateSettings(ctx context.Context, studyID int64, settings json.RawMessage) error
	// Activity summarizes the study's trials and iterations.
	Activity(ctx context.Context, studyID int64) (Activity, error)
	// LatestRecord returns the latest finished iteration's record (nil
	// when none has finished).
	LatestRecord(ctx context.Context, studyID int64) ([]byte, error)
}

// TrialStore holds a study's trials and iterations as one process
// proposes and evaluates them.
type TrialStore interface {
	// AddBatch records an iteration (unless present) and its new trials.
	AddBatch(ctx context.Context, studyID int64, it Iteration, trials []Trial) error
	// StartTrial marks an in-flight trial running (a new attempt: what
	// was reported before is dropped).
	StartTrial(ctx context.Context, studyID int64, id, attempts int, at time.Time) error
	// FinishTrial records an in-flight trial's outcome.
	FinishTrial(ctx context.Context, studyID int64, t *Trial) error
	// AddFinished records an iteration (unless present) and trials that
	// finished elsewhere, with their outcomes, in one transaction.
	AddFinished(ctx context.Context, studyID int64, it Iteration, trials []Trial) error
	// ReportIntermediate records an in-flight trial's intermediate value
	// as it is reported, and whether its evaluation was told to stop.
	ReportIntermediate(ctx context.Context, studyID int64, id int, p Intermediate, stop bool) error
	// SetRecord stores a finished iteration's output record.
	SetRecord(ctx context.Context, studyID int64, iteration int, record json.RawMessage) error
	// Trials returns the study's trials ordered by ID.
	Trials(ctx context.Context, studyID int64) ([]Trial, error)
	// Iterations returns the study's iterations in order.
	Iterations(ctx context.Context, studyID int64) ([]Iteration, error)
	// Attempts returns the attempts that did not give their trial its
	// outcome, in the order they happened.
	Attempts(ctx context.Context, studyID int64) ([]Attempt, error)
}

// QueueStore is the trial queue many workers share (see queue.go).
type QueueStore interface {
	RegisterWorker(ctx context.Context, studyID int64, h Holder, slots int, ttl time.Duration) error
	Heartbeat(ctx context.Context, studyID int64, h Holder, slots int, ttl time.Duration) error
	UnregisterWorker(ctx context.Context, studyID int64, h Holder) error
	Workers(ctx context.Context, studyID int64) ([]WorkerInfo, error)
	WorkerRegistered(ctx context.Context, studyID int64, host string, pid int) (bool, error)
	LeaseTrial(ctx context.Context, studyID int64, h Holder, ttl time.Duration) (*Trial, error)
	ReportTrial(ctx context.Context, studyID int64, h Holder, t *Trial, maxAttempts int) (accepted bool, err error)
	ReportLeased(ctx context.Context, studyID int64, h Holder, id int, p Intermediate) error
	ReclaimTrials(ctx context.Context, studyID int64, maxAttempts int) (int, error)
	QueueCounts(ctx context.Context, studyID int64) (pending, running, finished int, err error)
}

// LeaseStore grants a study's exclusive lease (see lease.go).
type LeaseStore interface {
	// AcquireLease gives h the study's lease for ttl, or a
	// *LeaseHeldError when a live holder has it.
	AcquireLease(ctx context.Context, studyID int64, h Holder, ttl time.Duration) (Lease, error)
	// CheckLease returns a *LeaseHeldError when a live holder has the
	// study's lease, without taking it.
	CheckLease(ctx context.Context, studyID int64) error
}

// Lease is a holder's exclusive right to write a study. Renew it well
// within its TTL (the host renews every TTL/3); Release it when done.
type Lease interface {
	// Storage returns the database as seen through the lease: every write
	// first checks, atomically with it, that this lease still holds its
	// study, and fails with ErrLeaseLost otherwise, so a holder that was
	// taken over (it hung past its TTL) cannot overwrite the new holder's
	// work. Reads are not affected.
	Storage() Storage
	// Holder returns who holds the lease.
	Holder() Holder
	// TTL returns how long the lease lasts after each renewal.
	TTL() time.Duration
	// Expires returns when the lease lapses unless renewed.
	Expires() time.Time
	// TookOver returns the holder whose lease was taken over (it had
	// expired or its process was gone), if any.
	TookOver() (Holder, bool)
	// Renew extends the lease by its TTL from now; a lease taken over or
	// released gives an error wrapping ErrLeaseLost.
	Renew(ctx context.Context) error
	// Release gives the study up; writes through Storage fail afterwards.
	Release(ctx context.Context) error
}

// DB is a Storage.
var _ Storage = (*DB)(nil)
