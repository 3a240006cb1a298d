package store

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// The trial queue of a Memory, as queue.go keeps it in a database. Its
// writes are not fenced by a study lease (the queue has leases per trial).

// queue runs f on the study of studyID under the lock. An unknown study
// is an error for the calls that insert rows (register, heartbeat, as a
// database's foreign key refuses them); the others find nothing to do.
func (d *Memory) queue(ctx context.Context, studyID int64, inserts bool, f func(*memStudy) error) error {
	return d.read(ctx, func() error {
		s := d.m.byID(studyID)
		if s == nil {
			if inserts {
				return fmt.Errorf("study %d %w", studyID, ErrNotFound)
			}
			return nil
		}
		return f(s)
	})
}

func (s *memStudy) worker(id string) *memWorker {
	for _, w := range s.workers {
		if w.ID == id {
			return w
		}
	}
	return nil
}

// upsertWorker registers h, or for a registered holder updates what
// update says.
func (s *memStudy) upsertWorker(h Holder, slots int, now, exp int64, update func(*memWorker)) {
	if w := s.worker(h.ID); w != nil {
		update(w)
		return
	}
	s.workers = append(s.workers, &memWorker{Holder: h, slots: slots, started: now, heartbeat: now, expires: exp})
}

// RegisterWorker is DB.RegisterWorker.
func (d *Memory) RegisterWorker(ctx context.Context, studyID int64, h Holder, slots int, ttl time.Duration) error {
	now := time.Now()
	err := d.queue(ctx, studyID, true, func(s *memStudy) error {
		n, exp := now.UnixNano(), now.Add(ttl).UnixNano()
		s.upsertWorker(h, slots, n, exp, func(w *memWorker) { w.slots, w.heartbeat, w.expires = slots, n, exp })
		return nil
	})
	if err != nil {
		return fmt.Errorf("register worker: %w", err)
	}
	return nil
}

// Heartbeat is DB.Heartbeat.
func (d *Memory) Heartbeat(ctx context.Context, studyID int64, h Holder, slots int, ttl time.Duration) error {
	err := d.queue(ctx, studyID, true, func(s *memStudy) error {
		now := time.Now()
		n, exp := now.UnixNano(), now.Add(ttl).UnixNano()
		for _, t := range s.trials {
			if t.holder == h.ID && t.status == Running {
				t.leaseExpires = exp
			}
		}
		s.upsertWorker(h, slots, n, exp, func(w *memWorker) { w.heartbeat, w.expires = n, exp })
		return nil
	})
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// UnregisterWorker is DB.UnregisterWorker.
func (d *Memory) UnregisterWorker(ctx context.Context, studyID int64, h Holder) error {
	err := d.queue(ctx, studyID, false, func(s *memStudy) error {
		s.dropWorkers(func(w *memWorker) bool { return w.ID == h.ID })
		for _, t := range s.trials {
			if t.holder == h.ID && t.status == Running {
				t.leaseExpires = 0
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("unregister worker: %w", err)
	}
	return nil
}

func (s *memStudy) dropWorkers(drop func(*memWorker) bool) {
	kept := s.workers[:0]
	for _, w := range s.workers {
		if !drop(w) {
			kept = append(kept, w)
		}
	}
	s.workers = kept
}

// Workers is DB.Workers.
func (d *Memory) Workers(ctx context.Context, studyID int64) ([]WorkerInfo, error) {
	var out []WorkerInfo
	err := d.read(ctx, func() error {
		s := d.m.byID(studyID)
		if s == nil {
			return nil
		}
		me, now := NewHolder(), time.Now()
		for _, w := range s.workers {
			r := leaseRow{host: w.Host, pid: w.PID, expiresNano: w.expires}
			if !r.takeable(me, now) {
				out = append(out, WorkerInfo{Holder: w.Holder, Slots: w.slots,
					Started: unixTime(w.started), Expires: unixTime(w.expires)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	return out, nil
}

// WorkerRegistered is DB.WorkerRegistered.
func (d *Memory) WorkerRegistered(ctx context.Context, studyID int64, host string, pid int) (bool, error) {
	found := false
	err := d.read(ctx, func() error {
		if s := d.m.byID(studyID); s != nil {
			for _, w := range s.workers {
				found = found || (w.Host == host && w.PID == pid)
			}
		}
		return nil
	})
	return found, err
}

// LeaseTrial is DB.LeaseTrial.
func (d *Memory) LeaseTrial(ctx context.Context, studyID int64, h Holder, ttl time.Duration) (*Trial, error) {
	var out *Trial
	err := d.queue(ctx, studyID, false, func(s *memStudy) error {
		for _, r := range s.sortedTrials() {
			if r.status != Pending {
				continue
			}
			now := time.Now()
			r.status, r.attempts, r.worker, r.holder = Running, r.attempts+1, h.Name(), h.ID
			r.leaseExpires, r.started = now.Add(ttl).UnixNano(), now.UnixNano()
			r.intermediates = nil // a new attempt: what an earlier one reported (ReportLeased) goes
			t := Trial{ID: r.id, Iteration: r.iteration, Index: r.index, Status: Running, StartedAt: now,
				Worker: r.worker, Attempts: r.attempts}
			var err error
			if t.X, err = decodeFloats(r.x); err != nil {
				return fmt.Errorf("trial %d: x: %w", r.id, err)
			}
			if t.U, err = decodeFloats(r.u); err != nil {
				return fmt.Errorf("trial %d: u: %w", r.id, err)
			}
			out = &t
			return nil
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lease trial: %w", err)
	}
	return out, nil
}

// ReportTrial is DB.ReportTrial.
func (d *Memory) ReportTrial(ctx context.Context, studyID int64, h Holder, t *Trial, maxAttempts int) (accepted bool, err error) {
	value, meta, err := outcome("report", t)
	if err != nil {
		return false, err
	}
	outputs, err := memOutputs("report", t)
	if err != nil {
		return false, err
	}
	if t.FinishedAt.IsZero() {
		t.FinishedAt = time.Now()
	}
	errText := CleanError(t.Error)
	err = d.queue(ctx, studyID, true, func(s *memStudy) error {
		r := s.trials[t.ID]
		if r == nil {
			return fmt.Errorf("trial %d: %w", t.ID, ErrNotFound)
		}
		if r.status == Running && r.holder == h.ID {
			accepted = true
			if t.Status == Failed && t.Attempts < maxAttempts {
				r.status, r.holder, r.leaseExpires, r.errText = Pending, "", 0, errText
				s.addAttempt(t.ID, t.Attempts, h.Name(), "failed", nil, errText)
				return nil
			}
			r.status, r.value, r.errText = t.Status, deref(value), errText
			r.finished, r.evalSeconds, r.meta, r.outputs, r.leaseExpires = t.FinishedAt.UnixNano(), t.EvalSeconds, meta, outputs, 0
			r.intermediates, r.stopping = slices.Clone(t.Intermediates), false
			return nil
		}
		// Already recorded by this very holder?
		if r.holder == h.ID && r.status == t.Status && (t.Status == Failed || r.value == t.Value) {
			accepted = true
			return nil
		}
		s.addAttempt(t.ID, t.Attempts, h.Name(), "late", value, errText)
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("report trial %d: %w", t.ID, err)
	}
	return accepted, nil
}

func (s *memStudy) addAttempt(trial, attempt int, worker, outcome string, value *float64, msg string) {
	s.attempts = append(s.attempts, Attempt{Trial: trial, Attempt: attempt, Worker: worker, Outcome: outcome,
		Value: value, Error: msg, At: unixTime(time.Now().UnixNano())})
}

// ReclaimTrials is DB.ReclaimTrials.
func (d *Memory) ReclaimTrials(ctx context.Context, studyID int64, maxAttempts int) (int, error) {
	me := NewHolder()
	n := 0
	err := d.queue(ctx, studyID, false, func(s *memStudy) error {
		now := time.Now()
		for _, t := range s.sortedTrials() {
			if t.status != Running {
				continue
			}
			r := leaseRow{expiresNano: t.leaseExpires}
			if w := s.worker(t.holder); w != nil {
				r.host, r.pid = w.Host, w.PID
			}
			if !r.takeable(me, now) {
				continue
			}
			msg := fmt.Sprintf("worker lost: %s stopped renewing its lease (attempt %d of %d)", t.worker, t.attempts, maxAttempts)
			t.status, t.holder, t.leaseExpires, t.errText = Pending, "", 0, msg
			if t.attempts >= maxAttempts {
				t.status, t.finished = Failed, now.UnixNano()
			}
			s.addAttempt(t.id, t.attempts, t.worker, "lost", nil, msg)
			n++
		}
		s.dropWorkers(func(w *memWorker) bool { return w.expires < now.UnixNano() })
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reclaim trials: %w", err)
	}
	return n, nil
}

// QueueCounts is DB.QueueCounts.
func (d *Memory) QueueCounts(ctx context.Context, studyID int64) (pending, running, finished int, err error) {
	err = d.read(ctx, func() error {
		s := d.m.byID(studyID)
		if s == nil {
			return nil
		}
		for _, t := range s.trials {
			switch t.status {
			case Pending:
				pending++
			case Running:
				running++
			default:
				finished++
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("count trials: %w", err)
	}
	return pending, running, finished, nil
}
