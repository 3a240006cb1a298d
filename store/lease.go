package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// scopeStudy is the leases.scope of a lease on a whole study.
const scopeStudy = "study"

// ErrLeaseLost: a write or renewal through a lease that no longer holds its
// study (it expired and another process took the study over, or it was
// released).
var ErrLeaseLost = errors.New("study lease lost")

// Holder identifies who holds a lease: a random token unique to one holder
// (one open study in one process), plus the host and process it runs in,
// which tell a person whom to ask and let another process on the same host
// see that the holder has died.
type Holder struct {
	ID   string
	Host string // "" when the host name is unknown (no dead-process check then)
	PID  int
}

// NewHolder returns a holder for this process with a fresh random ID.
func NewHolder() Holder {
	var b [16]byte
	rand.Read(b[:]) // crypto/rand.Read does not fail (it panics where there is no randomness)
	host, err := os.Hostname()
	if err != nil {
		host = ""
	}
	return Holder{ID: hex.EncodeToString(b[:]), Host: host, PID: os.Getpid()}
}

// LeaseHeldError is AcquireLease's (and CheckLease's) answer when a live
// holder has the study: who, since when, and when its lease lapses unless
// it renews it.
type LeaseHeldError struct {
	Study   string // the study's name
	Host    string
	PID     int
	Since   time.Time // when the holder acquired the lease
	Expires time.Time // when the lease lapses unless renewed
}

func (e *LeaseHeldError) Error() string {
	left := max(time.Until(e.Expires).Round(time.Second), 0)
	host := e.Host
	if host == "" {
		host = "(unknown)"
	}
	return fmt.Sprintf("study %q is in use by host %s pid %d since %s (lease expires in %v); wait for it to finish or stop it",
		e.Study, host, e.PID, e.Since.Local().Format(time.RFC3339), left)
}

// leaseState is what a Lease knows of itself, whichever storage keeps its
// row: the holder, the study, when it lapses and whether it was given up.
type leaseState struct {
	studyID  int64
	study    string
	holder   Holder
	ttl      time.Duration
	previous *Holder // the holder taken over, if any

	mu       sync.Mutex
	expires  time.Time
	released bool
}

// Holder returns who holds the lease.
func (l *leaseState) Holder() Holder { return l.holder }

// TTL returns how long the lease lasts after each renewal.
func (l *leaseState) TTL() time.Duration { return l.ttl }

// Expires returns when the lease lapses unless renewed.
func (l *leaseState) Expires() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expires
}

// TookOver returns the holder whose lease AcquireLease took over (it had
// expired or its process was gone), if any.
func (l *leaseState) TookOver() (Holder, bool) {
	if l.previous == nil {
		return Holder{}, false
	}
	return *l.previous, true
}

func (l *leaseState) renewed(exp time.Time) {
	l.mu.Lock()
	l.expires = exp
	l.mu.Unlock()
}

func (l *leaseState) release() {
	l.mu.Lock()
	l.released = true
	l.mu.Unlock()
}

func (l *leaseState) isReleased() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.released
}

// lostTo is the ErrLeaseLost error of a lease whose study's lease row is
// now cur (nil: no row): who has the study now, if anyone.
func (l *leaseState) lostTo(cur *leaseRow) error {
	if l.isReleased() {
		return fmt.Errorf("%w: this process released study %q", ErrLeaseLost, l.study)
	}
	if cur == nil || cur.holder == l.holder.ID {
		return fmt.Errorf("%w: study %q has no holder (was the lease row deleted?)", ErrLeaseLost, l.study)
	}
	return fmt.Errorf("%w: host %s pid %d took study %q over at %s (this process did not renew its lease in time)",
		ErrLeaseLost, cur.host, cur.pid, l.study, time.Unix(0, cur.acquired).Local().Format(time.RFC3339))
}

// dbLease is DB's Lease: a row of the leases table.
type dbLease struct {
	leaseState
	base *DB // the database without a fence (leases fence through it)
	view *DB
}

// leaseRow is a row of the leases table.
type leaseRow struct {
	holder, host                     string
	pid                              int
	acquired, heartbeat, expiresNano int64
}

// processAlive reports whether a process of this host is running; a
// variable so that tests can declare a holder dead.
var processAlive = pidAlive

// takeable reports whether a lease held by r may be taken over by h at now:
// it has expired (its holder stopped renewing it: crashed, hung, or cut off
// from the database), or its holder ran on h's host and that process no
// longer exists (kill -9 and resume at once, without waiting for the TTL).
func (r *leaseRow) takeable(h Holder, now time.Time) bool {
	if now.UnixNano() >= r.expiresNano {
		return true
	}
	return r.host != "" && r.host == h.Host && !processAlive(r.pid)
}

func (r *leaseRow) heldError(study string) *LeaseHeldError {
	return &LeaseHeldError{Study: study, Host: r.host, PID: r.pid,
		Since: time.Unix(0, r.acquired), Expires: time.Unix(0, r.expiresNano)}
}

// readLease returns the lease row of a study (nil when there is none).
func readLease(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, studyID int64) (*leaseRow, error) {
	var r leaseRow
	err := q.QueryRowContext(ctx,
		`SELECT holder, host, pid, acquired_at, heartbeat_at, expires_at FROM leases WHERE study_id=? AND scope=?`,
		studyID, scopeStudy).Scan(&r.holder, &r.host, &r.pid, &r.acquired, &r.heartbeat, &r.expiresNano)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// AcquireLease gives h the study's lease for ttl: when nobody holds it,
// when h already does, or by taking it over from a holder that is gone
// (see Lease.TookOver). A live holder's lease gives a *LeaseHeldError.
// It does not retry on a locked database: it is meant to fail fast, before
// any work.
func (d *DB) AcquireLease(ctx context.Context, studyID int64, h Holder, ttl time.Duration) (Lease, error) {
	if ttl <= 0 || h.ID == "" {
		return nil, fmt.Errorf("acquire lease: need a holder ID and a positive TTL")
	}
	base := &DB{conn: d.conn}
	l := &dbLease{base: base, leaseState: leaseState{studyID: studyID, holder: h, ttl: ttl}}
	l.view = &DB{conn: d.conn, fence: l}
	err := base.tx(ctx, func(tx *sqlTx) error {
		if err := tx.QueryRowContext(ctx, `SELECT name FROM studies WHERE id=?`, studyID).Scan(&l.study); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("study %d %w", studyID, ErrNotFound)
			}
			return err
		}
		now := time.Now()
		cur, err := readLease(ctx, tx, studyID)
		if err != nil {
			return err
		}
		if cur != nil && cur.holder != h.ID {
			if !cur.takeable(h, now) {
				return cur.heldError(l.study)
			}
			l.previous = &Holder{ID: cur.holder, Host: cur.host, PID: cur.pid}
		}
		l.expires = now.Add(ttl)
		_, err = tx.ExecContext(ctx,
			`INSERT INTO leases(study_id, scope, holder, host, pid, acquired_at, heartbeat_at, expires_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			 ON CONFLICT(study_id, scope) DO UPDATE SET holder=excluded.holder, host=excluded.host, pid=excluded.pid,
			   acquired_at=excluded.acquired_at, heartbeat_at=excluded.heartbeat_at, expires_at=excluded.expires_at`,
			studyID, scopeStudy, h.ID, h.Host, h.PID, now.UnixNano(), now.UnixNano(), l.expires.UnixNano())
		return err
	})
	if err != nil {
		var held *LeaseHeldError
		if errors.As(err, &held) {
			return nil, held // the message is already complete
		}
		return nil, fmt.Errorf("acquire lease on study %d: %w", studyID, err)
	}
	return l, nil
}

// CheckLease returns a *LeaseHeldError when a live holder has the study's
// lease (one AcquireLease would refuse), and nil when the study is free or
// its holder is gone. It only reads, so a caller can refuse before any
// set-up; AcquireLease decides again, atomically.
func (d *DB) CheckLease(ctx context.Context, studyID int64) error {
	if d.version.Load() < 3 {
		return nil // no leases table yet: nobody holds a lease
	}
	var name string
	if err := d.db.QueryRowContext(ctx, `SELECT name FROM studies WHERE id=?`, studyID).Scan(&name); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("study %d %w", studyID, ErrNotFound)
		}
		return fmt.Errorf("check lease: %w", d.classify(err))
	}
	cur, err := readLease(ctx, d.db, studyID)
	if err != nil {
		return fmt.Errorf("check lease on study %q: %w", name, d.classify(err))
	}
	if cur == nil || cur.takeable(NewHolder(), time.Now()) {
		return nil
	}
	return cur.heldError(name)
}

// Storage returns the database as seen through the lease: every write
// transaction first checks, inside the transaction, that this lease still
// holds its study, and fails with ErrLeaseLost otherwise. So a holder that
// was taken over (it hung past its TTL) cannot overwrite what the new
// holder does. Reads are not affected.
func (l *dbLease) Storage() Storage { return l.view }

// Renew extends the lease by its TTL from now. It retries on a locked
// database like the other writes of a running study. A lease that was
// taken over or released gives an error wrapping ErrLeaseLost.
func (l *dbLease) Renew(ctx context.Context) error {
	var exp time.Time
	err := l.base.retryTx(ctx, "renew lease", func(tx *sqlTx) error {
		now := time.Now()
		exp = now.Add(l.ttl)
		res, err := tx.ExecContext(ctx,
			`UPDATE leases SET heartbeat_at=?, expires_at=? WHERE study_id=? AND scope=? AND holder=?`,
			now.UnixNano(), exp.UnixNano(), l.studyID, scopeStudy, l.holder.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return l.lost(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("renew lease on study %q: %w", l.study, err)
	}
	l.renewed(exp)
	return nil
}

// Release gives the study up (it does nothing when the lease was already
// lost). Writes through DB fail afterwards.
func (l *dbLease) Release(ctx context.Context) error {
	l.release()
	err := l.base.tx(ctx, func(tx *sqlTx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE study_id=? AND scope=? AND holder=?`,
			l.studyID, scopeStudy, l.holder.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("release lease on study %q: %w", l.study, err)
	}
	return nil
}

// check is the fence of DB's writes: it fails unless the lease still
// holds the study, inside the write transaction tx.
func (l *dbLease) check(ctx context.Context, tx *sqlTx) error {
	cur, err := readLease(ctx, tx, l.studyID)
	if err != nil {
		return err
	}
	if cur != nil && cur.holder == l.holder.ID {
		return nil
	}
	return l.lost(ctx, tx)
}

// lost builds the ErrLeaseLost error: who has the study now, if anyone.
func (l *dbLease) lost(ctx context.Context, tx *sqlTx) error {
	if l.isReleased() {
		return l.lostTo(nil)
	}
	cur, err := readLease(ctx, tx, l.studyID)
	if err != nil {
		return err
	}
	return l.lostTo(cur)
}
