package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// newPending adds one pending trial to study s and returns it.
func newPending(t *testing.T, d Storage, s *Study, id int) Trial {
	t.Helper()
	tr := []Trial{{ID: id, Iteration: 0, Index: id, X: []float64{0.5}, U: []float64{0.5}}}
	if err := d.AddBatch(context.Background(), s.ID, Iteration{}, tr); err != nil {
		t.Fatal(err)
	}
	return tr[0]
}

func TestLeaseExclusive(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	s := newStudy(t, d, "a")
	h1, h2 := NewHolder(), NewHolder()
	if h1.ID == h2.ID || h1.PID != os.Getpid() {
		t.Fatalf("holders %+v %+v", h1, h2)
	}
	l1, err := d.AcquireLease(ctx, s.ID, h1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l1.TookOver(); ok {
		t.Fatal("a free lease reported a takeover")
	}
	// Another holder in this (live) process is refused, by name.
	_, err = d.AcquireLease(ctx, s.ID, h2, time.Minute)
	var held *LeaseHeldError
	if !errors.As(err, &held) {
		t.Fatalf("second holder: %v, want *LeaseHeldError", err)
	}
	if held.Study != "a" || held.Host != h1.Host || held.PID != os.Getpid() ||
		!held.Since.Equal(time.Unix(0, l1.Expires().Add(-time.Minute).UnixNano())) || !held.Expires.Equal(time.Unix(0, l1.Expires().UnixNano())) {
		t.Fatalf("held error %+v", held)
	}
	for _, want := range []string{`study "a" is in use by host ` + h1.Host, "pid " + strconv.Itoa(os.Getpid()), "lease expires in 1m0s", "wait for it to finish or stop it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if err := d.CheckLease(ctx, s.ID); !errors.As(err, &held) {
		t.Fatalf("CheckLease: %v", err)
	}
	// The holder itself may acquire again (and renew).
	if _, err := d.AcquireLease(ctx, s.ID, h1, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := l1.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	// Writes through the lease's view pass its fence.
	tr := newPending(t, l1.Storage(), s, 0)
	tr.Status, tr.Value = Complete, 1
	if err := l1.Storage().FinishTrial(ctx, s.ID, &tr); err != nil {
		t.Fatal(err)
	}
	// Released: free for the next holder, and the old view cannot write.
	if err := l1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.CheckLease(ctx, s.ID); err != nil {
		t.Fatalf("CheckLease after release: %v", err)
	}
	if _, err := d.AcquireLease(ctx, s.ID, h2, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := l1.Storage().AddBatch(ctx, s.ID, Iteration{}, []Trial{{ID: 1, Index: 1, X: []float64{0}, U: []float64{0}}}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("write after release: %v, want ErrLeaseLost", err)
	}
	if ts, _ := d.Trials(ctx, s.ID); len(ts) != 1 {
		t.Fatalf("%d trials after a fenced write", len(ts))
	}
}

// A holder that stopped renewing (its heartbeat is older than the TTL) is
// taken over; its renewals and writes then fail with ErrLeaseLost.
func TestLeaseTakeoverExpired(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	s := newStudy(t, d, "a")
	old, err := d.AcquireLease(ctx, s.ID, NewHolder(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	newPending(t, old.Storage(), s, 0)
	// A stale heartbeat: renewed last two minutes ago.
	stale := time.Now().Add(-2 * time.Minute).UnixNano()
	if _, err := d.db.Exec(`UPDATE leases SET heartbeat_at=?, expires_at=?`, stale, stale+int64(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := d.CheckLease(ctx, s.ID); err != nil {
		t.Fatalf("CheckLease of an expired lease: %v", err)
	}
	h := NewHolder()
	l, err := d.AcquireLease(ctx, s.ID, h, time.Minute)
	if err != nil {
		t.Fatalf("takeover of an expired lease: %v", err)
	}
	if prev, ok := l.TookOver(); !ok || prev.ID != old.Holder().ID {
		t.Fatalf("TookOver = %+v, %v", prev, ok)
	}
	err = old.Renew(ctx)
	if !errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), "took study \"a\" over") {
		t.Fatalf("renewal by the old holder: %v", err)
	}
	tr := Trial{ID: 0, Status: Complete, Value: 3}
	if err := old.Storage().FinishTrial(ctx, s.ID, &tr); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("write by the old holder: %v, want ErrLeaseLost", err)
	}
	if err := l.Storage().FinishTrial(ctx, s.ID, &tr); err != nil {
		t.Fatalf("write by the new holder: %v", err)
	}
	// The old holder's release does not free the new holder's lease.
	if err := old.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Renew(ctx); err != nil {
		t.Fatalf("new holder after the old one released: %v", err)
	}
}

// A live lease whose holder ran on this host and whose process is gone
// (kill -9) is taken over at once; on another host only expiry counts.
func TestLeaseTakeoverDeadProcess(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	s := newStudy(t, d, "a")
	dead := exitedPID(t)
	me := NewHolder()
	insert := func(host string) {
		t.Helper()
		now := time.Now().UnixNano()
		if _, err := d.db.Exec(`DELETE FROM leases`); err != nil {
			t.Fatal(err)
		}
		if _, err := d.db.Exec(`INSERT INTO leases VALUES (?, 'study', 'gone', ?, ?, ?, ?, ?)`,
			s.ID, host, dead, now, now, now+int64(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	insert("elsewhere.example")
	var held *LeaseHeldError
	if _, err := d.AcquireLease(ctx, s.ID, me, time.Minute); !errors.As(err, &held) || held.Host != "elsewhere.example" {
		t.Fatalf("dead PID on another host: %v, want *LeaseHeldError", err)
	}
	insert(me.Host)
	l, err := d.AcquireLease(ctx, s.ID, me, time.Minute)
	if err != nil {
		t.Fatalf("dead PID on this host: %v", err)
	}
	if prev, ok := l.TookOver(); !ok || prev.PID != dead {
		t.Fatalf("TookOver = %+v, %v", prev, ok)
	}
}

// exitedPID returns the PID of a child process that has exited and been
// reaped.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if pidAlive(pid) {
		t.Skipf("pid %d of an exited child was reused already", pid)
	}
	return pid
}

func TestPIDAlive(t *testing.T) {
	if !pidAlive(os.Getpid()) {
		t.Fatal("this process reported dead")
	}
	if pidAlive(exitedPID(t)) || pidAlive(0) || pidAlive(-1) {
		t.Fatal("a gone process reported alive")
	}
	// A child killed but not yet reaped (a zombie) is dead too.
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	if !pidAlive(cmd.Process.Pid) {
		t.Fatal("running child reported dead")
	}
	cmd.Process.Kill()
	deadline := time.Now().Add(5 * time.Second)
	for pidAlive(cmd.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatal("killed, unreaped child still reported alive")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// holdWriteLock takes the database's write lock from another connection
// (BEGIN IMMEDIATE) and keeps it for hold; it returns once the lock is held.
func holdWriteLock(t *testing.T, path string, hold time.Duration) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := raw.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(hold)
		conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		raw.Close()
	}()
}

// A writer holding the lock past the busy timeout delays a finished
// evaluation's write but does not lose it: the write retries, logging each
// wait, until the lock is released (within Options.BusyRetry).
func TestBusyRetry(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	var logs bytes.Buffer
	open := func(retry time.Duration) *DB {
		d, err := Open(path, Options{Create: true, BusyTimeout: 50 * time.Millisecond, BusyRetry: retry,
			Logger: zerolog.New(&logs)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	d := open(30 * time.Second)
	s := newStudy(t, d, "a")
	tr := newPending(t, d, s, 0)

	const hold = 1500 * time.Millisecond
	holdWriteLock(t, path, hold)
	t0 := time.Now()
	tr.Status, tr.Value = Complete, 42
	if err := d.FinishTrial(ctx, s.ID, &tr); err != nil {
		t.Fatalf("finish trial while locked for %v: %v", hold, err)
	}
	if waited := time.Since(t0); waited < hold-100*time.Millisecond {
		t.Fatalf("finished after %v: the lock was not held", waited)
	}
	ts, _ := d.Trials(ctx, s.ID)
	if ts[0].Status != Complete || ts[0].Value != 42 {
		t.Fatalf("stored %+v", ts[0])
	}
	n := strings.Count(logs.String(), `"level":"warn"`)
	if n < 3 || !strings.Contains(logs.String(), `"write":"finish trial"`) || !strings.Contains(logs.String(), `"waited"`) {
		t.Fatalf("%d warnings logged: %s", n, logs.String())
	}

	// Without retries (and for the writes that fail fast) the lock wins.
	noRetry := open(-1)
	tr2 := newPending(t, d, s, 1)
	holdWriteLock(t, path, 500*time.Millisecond)
	tr2.Status, tr2.Value = Complete, 1
	if err := noRetry.FinishTrial(ctx, s.ID, &tr2); !errors.Is(err, ErrLocked) {
		t.Fatalf("without retries: %v, want ErrLocked", err)
	}
	if err := d.UpdateSettings(ctx, s.ID, []byte(`{}`)); !errors.Is(err, ErrLocked) {
		t.Fatalf("update settings while locked: %v, want ErrLocked at once", err)
	}
	// A budget shorter than the lock: ErrLocked, saying how long it tried.
	short := open(200 * time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	holdWriteLock(t, path, time.Second)
	if err := short.FinishTrial(ctx, s.ID, &tr2); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "of retries") {
		t.Fatalf("retry budget spent: %v", err)
	}
}
