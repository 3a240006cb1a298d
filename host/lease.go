package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/store"
)

// leaseTTL is how long a stored study's lease outlives its holder's last
// heartbeat (the holder renews it every leaseTTL/3). A holder on another
// host that died is taken over after at most this long; on this host at
// once (store.LeaseStore.AcquireLease). A variable for tests.
var leaseTTL = 30 * time.Second

// releaseTimeout bounds Close's release of the lease: a database locked by
// another program must not hang the exit (the lease then expires, or a
// resume on this host sees the process gone).
const releaseTimeout = 10 * time.Second

// studyLease is a stored study's lease and the heartbeat that keeps it.
type studyLease struct {
	lease store.Lease
	// lost is cancelled, with the reason as cause, when a renewal finds the
	// lease taken over: Run stops instead of evaluating what it can no
	// longer record.
	lost   context.Context
	stop   context.CancelFunc // ends the heartbeat (and a renewal under way)
	done   chan struct{}      // closed when the heartbeat has ended
	once   sync.Once
	relErr error
}

// takeLease acquires the study's lease before anything reads the trials
// it will continue from (a second process on the study fails here, having
// written nothing and evaluated nothing) and starts the heartbeat. From
// then on the study writes through the lease's view of the database, so
// that if it ever loses the lease its writes fail instead of mixing with
// the new holder's.
func (s *Study) takeLease(ctx context.Context) error {
	if s.db == nil {
		return nil
	}
	// The leases table comes with the current schema: upgrade a database
	// opened with store.Options.DeferMigration (the study's settings are
	// checked by now).
	if err := s.db.Migrate(ctx); err != nil {
		return fmt.Errorf("study %q: %w", s.name, err)
	}
	l, err := s.db.AcquireLease(ctx, s.id, store.NewHolder(), leaseTTL)
	if err != nil {
		return publicErr(err) // a *LeaseHeldError is complete as it is
	}
	if prev, ok := l.TookOver(); ok {
		s.log.Warn().Str("holder_host", prev.Host).Int("holder_pid", prev.PID).
			Msg("took the study over from a process that no longer holds it (its process died, or its lease expired: it was stopped or cut off)")
	}
	s.db = l.Storage()
	s.lease = startHeartbeat(l, s.log)
	return nil
}

// startHeartbeat renews l every TTL/3 until stopped. A renewal that fails
// for another reason than a lost lease (the database locked past its
// retries) is logged and tried again at the next beat: the lease has
// three beats to spare.
func startHeartbeat(l store.Lease, log zerolog.Logger) *studyLease {
	lost, lose := context.WithCancelCause(context.Background())
	ctx, stop := context.WithCancel(context.Background())
	sl := &studyLease{lease: l, lost: lost, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(sl.done)
		tick := time.NewTicker(l.TTL() / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			err := l.Renew(ctx)
			switch {
			case err == nil || ctx.Err() != nil:
			case errors.Is(err, store.ErrLeaseLost):
				log.Error().Err(err).Msg("lost the study's lease: stopping")
				lose(err)
				return
			default:
				log.Warn().Err(err).Time("expires", l.Expires()).Msg("could not renew the study's lease; trying again")
			}
		}
	}()
	return sl
}

// close stops the heartbeat and releases the lease (once).
func (sl *studyLease) close() error {
	sl.once.Do(func() {
		sl.stop()
		<-sl.done
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		sl.relErr = sl.lease.Release(ctx)
	})
	return sl.relErr
}

// Close releases a stored study's lease, so that another Study (in this
// or another process) can open it; a study without a DB has nothing to
// release. The Study cannot write afterwards (its writes fail with
// store.ErrLeaseLost); reading it still works. Optimize closes its study;
// a caller of NewStudy or OpenStudy calls Close when done with the study.
// Close is idempotent.
func (s *Study) Close() error {
	if s.lease == nil {
		return nil
	}
	return s.lease.close()
}

// leaseContext returns ctx, cancelled also (with the reason as cause) if
// the study loses its lease, and a function to call when done with it.
func (s *Study) leaseContext(ctx context.Context) (context.Context, func()) {
	if s.lease == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	unwatch := context.AfterFunc(s.lease.lost, func() { cancel(context.Cause(s.lease.lost)) })
	return ctx, func() { unwatch(); cancel(nil) }
}
