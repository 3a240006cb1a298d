package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// The queue hands each pending trial to one worker, reclaims the trials of
// a worker whose lease expired (attempts kept, failed after the last one),
// and keeps a value reported on a reclaimed lease as an attempt only.
func TestQueue(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	s := newStudy(t, d, "a")
	for i := range 3 {
		newPending(t, d, s, i)
	}
	w1, w2 := NewHolder(), NewHolder()
	for _, w := range []Holder{w1, w2} {
		if err := d.RegisterWorker(ctx, s.ID, w, 2, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if ws, err := d.Workers(ctx, s.ID); err != nil || len(ws) != 2 || ws[0].Slots != 2 {
		t.Fatalf("workers %+v %v", ws, err)
	}
	a, err := d.LeaseTrial(ctx, s.ID, w1, time.Minute)
	if err != nil || a == nil || a.ID != 0 || a.Attempts != 1 || a.Worker != w1.Name() {
		t.Fatalf("first lease %+v %v", a, err)
	}
	b, _ := d.LeaseTrial(ctx, s.ID, w2, time.Nanosecond) // expires at once
	if b == nil || b.ID != 1 {
		t.Fatalf("second lease %+v", b)
	}
	a.Status, a.Value = Complete, 1.5
	if ok, err := d.ReportTrial(ctx, s.ID, w1, a, 2); !ok || err != nil {
		t.Fatalf("report: %v %v", ok, err)
	}
	// Reporting again (a retried commit) is accepted, not a second value.
	if ok, err := d.ReportTrial(ctx, s.ID, w1, a, 2); !ok || err != nil {
		t.Fatalf("repeated report: %v %v", ok, err)
	}
	time.Sleep(time.Millisecond)
	if n, err := d.ReclaimTrials(ctx, s.ID, 2); err != nil || n != 1 {
		t.Fatalf("reclaimed %d (%v), want 1", n, err)
	}
	// w2 reports on its lost lease: kept as a late attempt.
	b.Status, b.Value = Complete, 7
	if ok, err := d.ReportTrial(ctx, s.ID, w2, b, 2); ok || err != nil {
		t.Fatalf("late report accepted: %v %v", ok, err)
	}
	c, _ := d.LeaseTrial(ctx, s.ID, w1, time.Nanosecond)
	if c == nil || c.ID != 1 || c.Attempts != 2 {
		t.Fatalf("re-lease %+v", c)
	}
	time.Sleep(time.Millisecond)
	if n, _ := d.ReclaimTrials(ctx, s.ID, 2); n != 1 {
		t.Fatalf("second reclaim %d", n)
	}
	p, r, f, err := d.QueueCounts(ctx, s.ID)
	if err != nil || p != 1 || r != 0 || f != 2 {
		t.Fatalf("counts %d %d %d %v", p, r, f, err)
	}
	ts, _ := d.Trials(ctx, s.ID)
	if ts[0].Value != 1.5 || ts[1].Status != Failed || ts[1].Attempts != 2 || ts[1].Value != 0 {
		t.Fatalf("trials %+v", ts[:2])
	}
	at, _ := d.Attempts(ctx, s.ID)
	if len(at) != 3 || at[1].Outcome != "late" || at[1].Value == nil || *at[1].Value != 7 {
		t.Fatalf("attempts %+v", at)
	}
	// Concurrent workers take every trial exactly once.
	for i := 3; i < 40; i++ {
		newPending(t, d, s, i)
	}
	var mu sync.Mutex
	seen := map[int]int{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			h := NewHolder()
			for {
				tr, err := d.LeaseTrial(ctx, s.ID, h, time.Minute)
				if err != nil && !errors.Is(err, ErrLocked) {
					t.Error(err)
					return
				}
				if tr == nil {
					return
				}
				mu.Lock()
				seen[tr.ID]++
				mu.Unlock()
				tr.Status, tr.Value = Complete, float64(tr.ID)
				if ok, err := d.ReportTrial(ctx, s.ID, h, tr, 1); !ok || err != nil {
					t.Error(ok, err)
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != 38 {
		t.Fatalf("%d trials taken, want 38", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("trial %d taken %d times", id, n)
		}
	}
}

// A worker's registration is found by host and PID after it expired (a
// proposer whose heartbeat is late is still a worker), and no other
// process's is.
func TestWorkerRegistered(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	s := newStudy(t, d, "a")
	w := NewHolder()
	if err := d.RegisterWorker(ctx, s.ID, w, 1, time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	if ok, err := d.WorkerRegistered(ctx, s.ID, w.Host, w.PID); err != nil || !ok {
		t.Fatalf("expired registration not found: %v %v", ok, err)
	}
	if ok, err := d.WorkerRegistered(ctx, s.ID, w.Host, w.PID+1); err != nil || ok {
		t.Fatalf("another process found: %v %v", ok, err)
	}
	if err := d.UnregisterWorker(ctx, s.ID, w); err != nil {
		t.Fatal(err)
	}
	if ok, _ := d.WorkerRegistered(ctx, s.ID, w.Host, w.PID); ok {
		t.Fatal("unregistered worker found")
	}
}
