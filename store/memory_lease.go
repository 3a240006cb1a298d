package store

import (
	"context"
	"fmt"
	"time"
)

// memLease is Memory's Lease: the study's lease row, kept as DB keeps it.
type memLease struct {
	leaseState
	m    *memData
	view *Memory
}

// AcquireLease is DB.AcquireLease.
func (d *Memory) AcquireLease(ctx context.Context, studyID int64, h Holder, ttl time.Duration) (Lease, error) {
	if ttl <= 0 || h.ID == "" {
		return nil, fmt.Errorf("acquire lease: need a holder ID and a positive TTL")
	}
	l := &memLease{m: d.m, leaseState: leaseState{studyID: studyID, holder: h, ttl: ttl}}
	l.view = &Memory{m: d.m, fence: l}
	err := d.read(ctx, func() error {
		s := d.m.byID(studyID)
		if s == nil {
			return fmt.Errorf("study %d %w", studyID, ErrNotFound)
		}
		l.study = s.row.Name
		now := time.Now()
		if cur := s.lease; cur != nil && cur.holder != h.ID {
			if !cur.takeable(h, now) {
				return cur.heldError(l.study)
			}
			l.previous = &Holder{ID: cur.holder, Host: cur.host, PID: cur.pid}
		}
		l.expires = now.Add(ttl)
		s.lease = &leaseRow{holder: h.ID, host: h.Host, pid: h.PID,
			acquired: now.UnixNano(), heartbeat: now.UnixNano(), expiresNano: l.expires.UnixNano()}
		return nil
	})
	if err != nil {
		if held, ok := err.(*LeaseHeldError); ok {
			return nil, held
		}
		return nil, fmt.Errorf("acquire lease on study %d: %w", studyID, err)
	}
	return l, nil
}

// CheckLease is DB.CheckLease.
func (d *Memory) CheckLease(ctx context.Context, studyID int64) error {
	return d.read(ctx, func() error {
		s := d.m.byID(studyID)
		if s == nil {
			return fmt.Errorf("study %d %w", studyID, ErrNotFound)
		}
		if s.lease == nil || s.lease.takeable(NewHolder(), time.Now()) {
			return nil
		}
		return s.lease.heldError(s.row.Name)
	})
}

// Storage is dbLease.Storage: the Memory with writes fenced by l.
func (l *memLease) Storage() Storage { return l.view }

// Renew is dbLease.Renew.
func (l *memLease) Renew(ctx context.Context) error {
	var exp time.Time
	err := (&Memory{m: l.m}).read(ctx, func() error {
		now := time.Now()
		exp = now.Add(l.ttl)
		s := l.m.byID(l.studyID)
		if s == nil || s.lease == nil || s.lease.holder != l.holder.ID {
			return l.lost()
		}
		s.lease.heartbeat, s.lease.expiresNano = now.UnixNano(), exp.UnixNano()
		return nil
	})
	if err != nil {
		return fmt.Errorf("renew lease on study %q: %w", l.study, err)
	}
	l.renewed(exp)
	return nil
}

// Release is dbLease.Release.
func (l *memLease) Release(ctx context.Context) error {
	l.release()
	err := (&Memory{m: l.m}).read(ctx, func() error {
		if s := l.m.byID(l.studyID); s != nil && s.lease != nil && s.lease.holder == l.holder.ID {
			s.lease = nil
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("release lease on study %q: %w", l.study, err)
	}
	return nil
}

// check is the fence of the view's writes (dbLease.check), called with
// the Memory locked.
func (l *memLease) check() error {
	if s := l.m.byID(l.studyID); s != nil && s.lease != nil && s.lease.holder == l.holder.ID {
		return nil
	}
	return l.lost()
}

// lost is dbLease.lost, called with the Memory locked.
func (l *memLease) lost() error {
	var cur *leaseRow
	if s := l.m.byID(l.studyID); s != nil {
		cur = s.lease
	}
	return l.lostTo(cur)
}
