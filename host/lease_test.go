package host

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/internal/testenv"
	"github.com/tesbo/tesbo/store"
)

// openPath opens the study database at path as another process would: its
// own handle, sharing only the file.
func openPath(t *testing.T, path string, o store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// dbState is everything stored about study name, to check that a refused
// second holder wrote nothing.
func dbState(t *testing.T, db *store.DB, name string) string {
	t.Helper()
	ctx := context.Background()
	row, err := db.Study(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	trials, err := db.Trials(ctx, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	its, err := db.Iterations(ctx, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(row.Settings)
	for _, tr := range trials {
		b.WriteString(string(tr.Status) + tr.FinishedAt.String() + tr.StartedAt.String())
	}
	for _, it := range its {
		b.Write(it.Model)
		b.Write(it.Record)
	}
	return b.String()
}

// Two Studies on one stored study — here in one process, through two
// handles of one file, as two processes would — cannot both run it: the
// second is refused with the holder's host and PID before it writes or
// evaluates anything, and gets the study once the first is closed.
func TestSecondHolderRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db1 := openPath(t, path, store.Options{Create: true})
	db2 := openPath(t, path, store.Options{})
	o := baseOptions(3)
	o.DB, o.Name = wrap(db1), "st"
	obj := &branin{}
	info, _ := obj.Info(ctx)
	first, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Ask(ctx, 0); err != nil {
		t.Fatal(err)
	}
	before := dbState(t, db2, "st")
	// Iters would change the stored settings: it must not either.
	second, err := OpenStudy(ctx, wrap(db2), "st", Options{Proposer: testProposer(), Iters: 9})
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || second != nil {
		t.Fatalf("second OpenStudy: %v, want *store.LeaseHeldError", err)
	}
	host, _ := os.Hostname()
	if held.PID != os.Getpid() || held.Host != host || held.Study != "st" {
		t.Fatalf("held by %+v, want this process", held)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, `study "st" is in use by host `+host) || !strings.HasSuffix(msg, "wait for it to finish or stop it") {
		t.Fatalf("message %q", msg)
	}
	if after := dbState(t, db2, "st"); after != before {
		t.Fatalf("the refused study wrote:\n%s\n%s", before, after)
	}
	if obj.calls.Load() != 0 {
		t.Fatalf("%d evaluations", obj.calls.Load())
	}
	// Closed: the study is free, the closed Study cannot write any more.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.Tell(ctx, 0, 1, nil); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("Tell after Close: %v, want ErrLeaseLost", err)
	}
	second, err = OpenStudy(ctx, wrap(db2), "st", Options{Proposer: testProposer()})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, err := second.Run(ctx, obj); err != nil {
		t.Fatal(err)
	}
}

// Two processes resuming one study at once: exactly one gets it.
func TestConcurrentOpenOneWins(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	o := baseOptions(3)
	o.DB, o.Name = wrap(openPath(t, path, store.Options{Create: true})), "st"
	info, _ := (&branin{}).Info(ctx)
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	const n = 4
	errs := make(chan error, n)
	studies := make(chan *Study, n)
	for range n {
		db := openPath(t, path, store.Options{})
		go func() {
			s, err := OpenStudy(ctx, wrap(db), "st", Options{Proposer: testProposer()})
			if err == nil {
				studies <- s
			}
			errs <- err
		}()
	}
	won := 0
	for range n {
		var held *store.LeaseHeldError
		switch err := <-errs; {
		case err == nil:
			won++
		case errors.As(err, &held), errors.Is(err, store.ErrLocked):
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent OpenStudy calls got the study", won, n)
	}
	(<-studies).Close()
}

// crash leaves s as a process killed with kill -9 would: its heartbeat
// stops and its lease stays in the database.
func crash(s *Study) {
	s.lease.stop()
	<-s.lease.done
}

// exitedPID returns the PID of a child process that has exited and been
// reaped.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A holder that died mid-run is taken over — at once when its process is
// gone from this host, after the TTL when its heartbeat is stale — and the
// resumed study equals an uninterrupted one; the dead holder, were it to
// wake up, could not write.
func TestTakeoverAfterHolderDied(t *testing.T) {
	ctx := context.Background()
	want, err := Optimize(ctx, &branin{}, baseOptions(5))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, sql string
		arg       func() any
	}{
		{"dead pid", `UPDATE leases SET pid=?`, func() any { return exitedPID(t) }},
		{"stale heartbeat", `UPDATE leases SET heartbeat_at=?-60000000000, expires_at=?-30000000000`, func() any { return time.Now().UnixNano() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			o := baseOptions(5)
			o.DB, o.Name, o.Grace = wrap(openPath(t, path, store.Options{Create: true})), "st", -1
			cctx, cancel := context.WithCancel(ctx)
			var n atomic.Int64
			o.OnTrial = func(Trial) {
				if n.Add(1) == 6 {
					cancel()
				}
			}
			info, _ := (&branin{}).Info(ctx)
			dead, err := NewStudy(ctx, info, o)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dead.Run(cctx, &branin{}); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v", err)
			}
			crash(dead)
			arg := c.arg()
			if _, err := sqlExec(t, path, c.sql, arg, arg); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			s, err := OpenStudy(ctx, wrap(openPath(t, path, store.Options{})), "st",
				Options{Proposer: testProposer(), Logger: zerolog.New(&logs)})
			if err != nil {
				t.Fatalf("resume after the holder died: %v", err)
			}
			defer s.Close()
			if !strings.Contains(logs.String(), "took the study over") {
				t.Errorf("takeover not logged: %s", logs.String())
			}
			if fl := dead.InFlight(); len(fl) > 0 {
				if err := dead.Tell(ctx, fl[0].ID, 1, nil); !errors.Is(err, store.ErrLeaseLost) {
					t.Fatalf("the dead holder's Tell: %v, want ErrLeaseLost", err)
				}
			}
			if _, err := s.Run(ctx, &branin{}); err != nil {
				t.Fatal(err)
			}
			sameTrials(t, want.Trials, s.Trials())
		})
	}
}

// A holder whose lease was taken over stops at its next write instead of
// recording over the new holder's work.
func TestLeaseLostStopsRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	o := baseOptions(5)
	o.DB, o.Name, o.Parallel = wrap(openPath(t, path, store.Options{Create: true})), "st", 1
	thief := openPath(t, path, store.Options{})
	var n atomic.Int64
	obj := funcObjective{info: unitInfo(2), f: func(context.Context, []float64) (float64, error) {
		if n.Add(1) == 4 {
			// Another process took the study over (e.g. this one hung past
			// the TTL): its holder row replaces ours.
			row, _ := thief.Study(ctx, "st")
			now := time.Now().UnixNano()
			if _, err := sqlExec(t, path, `UPDATE leases SET holder='thief', pid=1, acquired_at=?, expires_at=? WHERE study_id=?`,
				now, now+int64(time.Minute), row.ID); err != nil {
				t.Error(err)
			}
		}
		return 0.5, nil
	}}
	res, err := Optimize(ctx, obj, o)
	if !errors.Is(err, store.ErrLeaseLost) || !strings.Contains(err.Error(), "took study \"st\" over") {
		t.Fatalf("run after losing the lease: %v", err)
	}
	if res.Evaluations != 3 {
		t.Fatalf("%d evaluations recorded, want the 3 before the takeover", res.Evaluations)
	}
}

// sqlExec runs q on the database at path from a connection of its own
// (another process's), waiting out the study's own brief writes.
func sqlExec(t *testing.T, path, q string, args ...any) (sql.Result, error) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	return raw.Exec(q, args...)
}

// The heartbeat keeps the lease from expiring while the study runs, and
// reports a takeover through the lost context.
func TestHeartbeat(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	o := baseOptions(1)
	o.DB, o.Name = wrap(db), "st"
	info, _ := (&branin{}).Info(ctx)
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	row, _ := db.Study(ctx, "st")
	// A second, short lease on the same study, kept by its own heartbeat.
	s.lease.close()
	const ttl = 400 * time.Millisecond // renewed every 133 ms: slack for a loaded machine
	l, err := db.AcquireLease(ctx, row.ID, store.NewHolder(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	sl := startHeartbeat(l, zerolog.Nop())
	defer sl.close()
	time.Sleep(4 * ttl)
	var held *store.LeaseHeldError
	if err := db.CheckLease(ctx, row.ID); !errors.As(err, &held) {
		t.Fatalf("after %v with a heartbeat: %v, want the lease still held", 4*ttl, err)
	}
	if _, err := sqlExec(t, db.Path(), `UPDATE leases SET holder='thief'`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sl.lost.Done():
		if !errors.Is(context.Cause(sl.lost), store.ErrLeaseLost) {
			t.Fatalf("lost with cause %v", context.Cause(sl.lost))
		}
	case <-time.After(5 * ttl):
		t.Fatal("the heartbeat did not notice the takeover")
	}
}

// busyHold is how long another connection holds the write lock in
// TestRunSurvivesLockedDB, and busyRetry the run's retry budget: longer
// than the busy timeout, far shorter than the default budget.
const (
	busyHold  = 7 * time.Second
	busyRetry = 30 * time.Second
)

// Another program holding the database's write lock for longer than the
// busy timeout does not abort a run: the writes wait (logged) and every
// value is stored.
func TestRunSurvivesLockedDB(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a lock for 7 s")
	}
	t.Parallel() // mostly waiting: the wait overlaps the other tests' work
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	var logs testenv.SyncBuffer
	db := openPath(t, path, store.Options{Create: true, BusyTimeout: 100 * time.Millisecond, BusyRetry: busyRetry,
		Logger: zerolog.New(&logs)})
	o := Options{Proposer: randomProposer{}, Batch: 2, Parallel: 2, Init: 2, Iters: 4, Seed: 1, DB: wrap(db), Name: "st"}
	var n atomic.Int64
	var lockedAt time.Time
	o.OnTrial = func(Trial) {
		if n.Add(1) == 3 {
			lockedAt = time.Now()
			holdLock(t, path, busyHold)
		}
	}
	res, err := Optimize(ctx, funcObjective{info: unitInfo(1), f: func(_ context.Context, x []float64) (float64, error) {
		return x[0], nil
	}}, o)
	if err != nil {
		t.Fatalf("run with the database locked for %v: %v", busyHold, err)
	}
	if took := time.Since(lockedAt); took < busyHold {
		t.Fatalf("the run ended %v after the lock was taken: it was not held", took)
	}
	row, _ := db.Study(ctx, "st")
	trials, _ := db.Trials(ctx, row.ID)
	if len(trials) != 2+4*2 || res.Evaluations != len(trials) {
		t.Fatalf("%d trials stored, %d evaluations", len(trials), res.Evaluations)
	}
	for _, tr := range trials {
		if tr.Status != store.Complete || tr.Value != tr.X[0] {
			t.Fatalf("trial %d stored as %s %v", tr.ID, tr.Status, tr.Value)
		}
	}
	if !strings.Contains(logs.String(), "database locked by another connection; retrying") {
		t.Fatalf("no retry logged: %s", logs.String())
	}
}

// holdLock takes the write lock of the database at path from another
// connection (BEGIN IMMEDIATE) and releases it after hold.
func holdLock(t *testing.T, path string, hold time.Duration) {
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)") // waits for the run's own brief writes
	if err != nil {
		t.Error(err)
		return
	}
	conn, err := raw.Conn(context.Background())
	if err == nil {
		_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
	}
	if err != nil {
		t.Error(err)
		raw.Close()
		return
	}
	time.AfterFunc(hold, func() {
		conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		raw.Close()
	})
}
