package host

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/tesbo/tesbo/store"
)

// A worker's share of proposing: the worker that holds the study's lease
// proposes for all of them, as many points as there are idle slots.

// proposerRole is this worker's share of proposing: it holds the study
// (OpenStudy, whose lease makes it the one proposer) while it can.
type proposerRole struct {
	w     *worker
	mu    sync.Mutex
	study *Study
	next  time.Time // do not try to take the lease before
}

// propose issues new points when the queue is empty and evaluation slots
// are idle, if this worker is (or can become) the proposer. It returns how
// many points it issued.
func (p *proposerRole) propose(ctx context.Context) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.w
	if p.study == nil {
		if time.Now().Before(p.next) {
			return 0, nil
		}
		s, err := openStudy(ctx, w.db, w.name, Options{Logger: w.log})
		var held *store.LeaseHeldError
		if errors.As(err, &held) {
			p.next = time.Now().Add(w.o.Poll * 5)
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		w.log.Info().Msg("proposer: this worker proposes the study's points")
		_, nf := NoiseFreeOf(w.obj) // the records recommend as Run's would
		s.mu.Lock()
		s.refine = refines(s.opts.Recommend, nf)
		s.mu.Unlock()
		p.study = s
	}
	s := p.study
	if s.lease != nil && s.lease.lost.Err() != nil {
		p.drop("lost the proposer lease")
		return 0, nil
	}
	q, err := p.size(ctx)
	if err == nil { // always: the web view shows the records' recommendation and regret
		err = p.record(ctx)
	}
	if err != nil || q == 0 {
		return 0, p.check(err)
	}
	trials, err := s.Ask(ctx, q)
	if err != nil {
		return 0, p.check(err)
	}
	w.mu.Lock()
	w.res.Proposed += len(trials)
	w.mu.Unlock()
	w.log.Debug().Int("points", len(trials)).Int("iter", s.Iteration()).Msg("proposed")
	return len(trials), nil
}

// size reloads the trials and returns how many points to propose: none
// while the queue holds any or the budget is issued, else the idle slots
// of the live workers (at least 1, at most Batch and what the budget has
// left).
func (p *proposerRole) size(ctx context.Context) (int, error) {
	s, w := p.study, p.w
	if err := s.reload(ctx); err != nil {
		return 0, err
	}
	ws, err := w.db.Workers(ctx, w.id)
	if err != nil {
		return 0, err
	}
	slots := 0
	for _, x := range ws {
		slots += x.Slots
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	running := 0
	for _, t := range s.trials {
		switch t.Status {
		case Pending:
			return 0, nil
		case Running:
			running++
		}
	}
	w.mu.Lock()
	left := w.budget - len(s.trials)
	w.mu.Unlock()
	q := min(max(slots-running, 1), s.opts.Batch, left)
	if issued := s.designIssued(); issued < len(s.design) {
		q = min(max(slots-running, 1), left, len(s.design)-issued)
	}
	return max(q, 0), nil
}

// record stores the records of the iterations whose trials have all
// finished (as Run does after each batch).
func (p *proposerRole) record(ctx context.Context) error {
	s := p.study
	s.mu.Lock()
	ts := slices.Clone(s.trials)
	s.mu.Unlock()
	_, err := s.report(ctx, p.w.obj, ts)
	return err
}

// check drops the proposer role on a lost lease (another worker took it
// over) and passes other errors on.
func (p *proposerRole) check(err error) error {
	if errors.Is(err, store.ErrLeaseLost) {
		p.drop(err.Error())
		return nil
	}
	return err
}

func (p *proposerRole) drop(why string) {
	p.w.log.Warn().Str("reason", why).Msg("no longer the proposer")
	p.study.Close()
	p.study = nil
}

func (p *proposerRole) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.study != nil {
		p.study.Close()
		p.study = nil
	}
}

// reload replaces the study's trials with the database's (workers change
// them); iterations are only written by the lease holder, this study.
func (s *Study) reload(ctx context.Context) error {
	ts, err := loadTrials(ctx, s.db, s.id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.takeTrials(ts); err != nil {
		return err
	}
	s.cache = nil
	return nil
}
