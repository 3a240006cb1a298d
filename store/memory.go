package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// memoryPath is what a Memory's Path returns.
const memoryPath = ":memory:"

// Memory is a Storage that keeps its studies in this process's memory:
// for embedding tesbo without a file and for tests. It behaves as DB does,
// call for call — the same results bit for bit (points and outcomes go
// through the same encoding as in a database), the same errors, leases
// that fence writes, the same trial queue — except that nothing outlives
// the process and no other process can share it. Its schema is always
// current. It is safe for concurrent use.
type Memory struct {
	m *memData
	// fence, when set, must still hold its study for a write to succeed
	// (a Lease's Storage; see DB.fence).
	fence *memLease
	// closed: Close was called on this handle; its calls fail as a closed
	// database's do, so that a use after Close shows in tests on memory
	// as it would on SQLite.
	closed *atomic.Bool
}

// memData is what every view of one Memory shares.
type memData struct {
	mu      sync.Mutex
	lastID  int64
	studies []*memStudy // in creation order (ID order)
}

// memStudy is a study and everything stored about it.
type memStudy struct {
	row      Study // times as a database returns them (time.Unix)
	trials   map[int]*memTrial
	iters    map[int]*Iteration
	lease    *leaseRow
	workers  []*memWorker // in registration order
	attempts []Attempt
}

// memTrial is a trial's row, its point and meta encoded as a database
// stores them and times in Unix nanoseconds (0: not set).
type memTrial struct {
	id, iteration, index int
	x, u                 string
	status               Status
	value                float64
	errText              string
	attempts             int
	created, started     int64
	finished             int64
	evalSeconds          float64
	meta                 string
	intermediates        []Intermediate
	stopping             bool   // ReportIntermediate with stop, in flight
	outputs              string // encodeOutputs' text; "" for NULL
	worker, holder       string
	leaseExpires         int64
}

// memWorker is a worker's registration.
type memWorker struct {
	Holder
	slots                       int
	started, heartbeat, expires int64
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{m: &memData{}, closed: new(atomic.Bool)} }

// Memory is a Storage.
var _ Storage = (*Memory)(nil)

// Path returns memoryPath.
func (d *Memory) Path() string { return memoryPath }

// MigrationPending is false: a Memory's schema is always current.
func (d *Memory) MigrationPending() bool { return false }

// Migrate does nothing.
func (d *Memory) Migrate(context.Context) error { return nil }

// Close closes this handle: its later calls fail with errMemoryClosed
// (the studies stay for other handles of the same Memory).
func (d *Memory) Close() error {
	if d.closed != nil {
		d.closed.Store(true)
	}
	return nil
}

// errMemoryClosed is a closed Memory handle's error.
var errMemoryClosed = errors.New("the in-memory storage was closed")

// read runs f under the lock (ctx ended: its error, as a database gives).
func (d *Memory) read(ctx context.Context, f func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.closed != nil && d.closed.Load() {
		return errMemoryClosed
	}
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	return f()
}

// write is read for a write through a lease's fence (DB.tx).
func (d *Memory) write(ctx context.Context, f func() error) error {
	return d.read(ctx, func() error {
		if d.fence != nil {
			if err := d.fence.check(); err != nil {
				return err
			}
		}
		return f()
	})
}

func (m *memData) byID(id int64) *memStudy {
	i := sort.Search(len(m.studies), func(i int) bool { return m.studies[i].row.ID >= id })
	if i < len(m.studies) && m.studies[i].row.ID == id {
		return m.studies[i]
	}
	return nil
}

func (m *memData) byName(name string) *memStudy {
	for _, s := range m.studies {
		if s.row.Name == name {
			return s
		}
	}
	return nil
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage{}, b...)
}

func unixTime(n int64) time.Time { return time.Unix(0, n) }

// study returns the study of studyID for a write (the database's foreign
// key refuses an unknown one).
func (m *memData) study(studyID int64) (*memStudy, error) {
	if s := m.byID(studyID); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("study %d %w", studyID, ErrNotFound)
}

// AddBatch is DB.AddBatch.
func (d *Memory) AddBatch(ctx context.Context, studyID int64, it Iteration, trials []Trial) error {
	now := time.Now()
	err := d.write(ctx, func() error {
		s, err := d.m.study(studyID)
		if err != nil {
			return err
		}
		return s.addRows(it, trials, now)
	})
	if err != nil {
		return fmt.Errorf("add batch: %w", err)
	}
	return nil
}

// AddFinished is DB.AddFinished.
func (d *Memory) AddFinished(ctx context.Context, studyID int64, it Iteration, trials []Trial) error {
	outs := make([]memOutcome, len(trials))
	for i := range trials {
		var err error
		if outs[i], err = prepareMemOutcome("add finished", &trials[i]); err != nil {
			return err
		}
	}
	now := time.Now()
	err := d.write(ctx, func() error {
		s, err := d.m.study(studyID)
		if err != nil {
			return err
		}
		if err := s.addRows(it, pendingCopies(trials), now); err != nil {
			return err
		}
		for i := range trials {
			if err := s.finish(&trials[i], outs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add finished: %w", err)
	}
	for i := range trials {
		trials[i].CreatedAt = now
	}
	return nil
}

// addRows is AddBatch's work under the write lock.
func (s *memStudy) addRows(it Iteration, trials []Trial, now time.Time) error {
	rows := make([]*memTrial, len(trials))
	ids, slots := map[int]bool{}, map[[2]int]bool{}
	for i := range trials {
		t := &trials[i]
		x, u, meta, err := newTrialRow(t, now)
		if err != nil {
			return err
		}
		slot := [2]int{t.Iteration, t.Index}
		if s.trials[t.ID] != nil || ids[t.ID] || slots[slot] || s.hasSlot(slot) {
			return fmt.Errorf("trial %d: %w: the ID or (iteration, index) is taken", t.ID, ErrConflict)
		}
		ids[t.ID], slots[slot] = true, true
		rows[i] = &memTrial{id: t.ID, iteration: t.Iteration, index: t.Index, x: x, u: u,
			status: t.Status, created: now.UnixNano(), meta: meta}
	}
	if s.iters[it.Iteration] == nil {
		s.iters[it.Iteration] = &Iteration{Iteration: it.Iteration, Model: cloneRaw(it.Model),
			FitSeconds: it.FitSeconds, ProposeSeconds: it.ProposeSeconds, Record: cloneRaw(it.Record)}
	}
	for _, r := range rows {
		s.trials[r.id] = r
	}
	return nil
}

func (s *memStudy) hasSlot(slot [2]int) bool {
	for _, t := range s.trials {
		if t.iteration == slot[0] && t.index == slot[1] {
			return true
		}
	}
	return false
}

// inFlight returns trial id when it is pending or running (DB's oneRow).
func (s *memStudy) inFlight(id int) (*memTrial, error) {
	t := s.trials[id]
	if t == nil || t.status.Done() {
		return nil, fmt.Errorf("trial %d is not in flight (unknown or already finished): %w", id, ErrConflict)
	}
	return t, nil
}

// StartTrial is DB.StartTrial.
func (d *Memory) StartTrial(ctx context.Context, studyID int64, id, attempts int, at time.Time) error {
	err := d.write(ctx, func() error {
		s, err := d.m.study(studyID)
		if err != nil {
			return err
		}
		t, err := s.inFlight(id)
		if err != nil {
			return err
		}
		t.status, t.attempts, t.started = Running, attempts, at.UnixNano()
		t.intermediates, t.stopping = nil, false
		return nil
	})
	if err != nil {
		return fmt.Errorf("start trial %d: %w", id, err)
	}
	return nil
}

// outcome checks a final outcome as DB does and returns its stored value
// (nil for a failure) and meta ("" for none).
func outcome(what string, t *Trial) (value *float64, meta string, err error) {
	if !t.Status.Done() {
		return nil, "", fmt.Errorf("%s trial %d: status %q is not final", what, t.ID, t.Status)
	}
	if t.Status.hasValue() {
		if math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
			return nil, "", fmt.Errorf("%s trial %d: value %v is not finite", what, t.ID, t.Value)
		}
		v := t.Value
		value = &v
	}
	if err := checkIntermediates(t); err != nil {
		return nil, "", fmt.Errorf("%s trial %d: %w", what, t.ID, err)
	}
	if len(t.Meta) > 0 {
		b, err := json.Marshal(t.Meta)
		if err != nil {
			return nil, "", fmt.Errorf("%s trial %d: meta: %w", what, t.ID, err)
		}
		meta = string(b)
	}
	return value, meta, nil
}

// memOutputs is encodeOutputs as Memory stores it ("" for NULL).
func memOutputs(what string, t *Trial) (string, error) {
	v, err := encodeOutputs(t)
	if err != nil {
		return "", fmt.Errorf("%s trial %d: %w", what, t.ID, err)
	}
	s, _ := v.(string)
	return s, nil
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// FinishTrial is DB.FinishTrial.
func (d *Memory) FinishTrial(ctx context.Context, studyID int64, t *Trial) error {
	o, err := prepareMemOutcome("finish", t)
	if err != nil {
		return err
	}
	err = d.write(ctx, func() error {
		s, err := d.m.study(studyID)
		if err != nil {
			return err
		}
		return s.finish(t, o)
	})
	if err != nil {
		return fmt.Errorf("finish trial %d: %w", t.ID, err)
	}
	return nil
}

// memOutcome is an outcome's checked and encoded fields.
type memOutcome struct {
	value         *float64
	meta, outputs string
}

// prepareMemOutcome checks t's outcome and encodes it (what names the
// operation in errors), and gives t its finishing time when it has none.
func prepareMemOutcome(what string, t *Trial) (memOutcome, error) {
	value, meta, err := outcome(what, t)
	if err != nil {
		return memOutcome{}, err
	}
	outputs, err := memOutputs(what, t)
	if err != nil {
		return memOutcome{}, err
	}
	if t.FinishedAt.IsZero() {
		t.FinishedAt = time.Now()
	}
	return memOutcome{value: value, meta: meta, outputs: outputs}, nil
}

// finish is FinishTrial's work under the write lock.
func (s *memStudy) finish(t *Trial, o memOutcome) error {
	r, err := s.inFlight(t.ID)
	if err != nil {
		return err
	}
	r.status, r.value, r.errText, r.attempts = t.Status, deref(o.value), CleanError(t.Error), t.Attempts
	if !t.StartedAt.IsZero() {
		r.started = t.StartedAt.UnixNano()
	}
	r.finished, r.evalSeconds, r.meta, r.outputs = t.FinishedAt.UnixNano(), t.EvalSeconds, o.meta, o.outputs
	r.intermediates, r.stopping = slices.Clone(t.Intermediates), false
	return nil
}

// ReportIntermediate is DB.ReportIntermediate.
func (d *Memory) ReportIntermediate(ctx context.Context, studyID int64, id int, p Intermediate, stop bool) error {
	if err := checkReported(id, p); err != nil {
		return err
	}
	err := d.write(ctx, func() error {
		s, err := d.m.study(studyID)
		if err != nil {
			return err
		}
		r, err := s.inFlight(id)
		if err != nil {
			return err
		}
		if err := r.appendReported(p); err != nil {
			return err
		}
		r.stopping = r.stopping || stop
		return nil
	})
	if err != nil {
		return fmt.Errorf("report trial %d: %w", id, err)
	}
	return nil
}

// SetRecord is DB.SetRecord.
func (d *Memory) SetRecord(ctx context.Context, studyID int64, iteration int, record json.RawMessage) error {
	if !json.Valid(record) {
		return fmt.Errorf("set record: not JSON")
	}
	err := d.write(ctx, func() error {
		s := d.m.byID(studyID)
		var it *Iteration
		if s != nil {
			it = s.iters[iteration]
		}
		if it == nil {
			return fmt.Errorf("iteration %d %w", iteration, ErrNotFound)
		}
		it.Record = cloneRaw(record)
		return nil
	})
	if err != nil {
		return fmt.Errorf("set record: %w", err)
	}
	return nil
}

// trial decodes a stored trial as DB.Trials reads it.
func (r *memTrial) trial() (Trial, error) {
	t := Trial{ID: r.id, Iteration: r.iteration, Index: r.index, Status: r.status, Value: r.value,
		Error: r.errText, Attempts: r.attempts, CreatedAt: unixTime(r.created), EvalSeconds: r.evalSeconds,
		Worker: r.worker, Intermediates: slices.Clone(r.intermediates), Stopping: r.stopping}
	if r.started != 0 {
		t.StartedAt = unixTime(r.started)
	}
	if r.finished != 0 {
		t.FinishedAt = unixTime(r.finished)
	}
	var err error
	if t.X, err = decodeFloats(r.x); err != nil {
		return t, fmt.Errorf("load trial %d: x: %w", t.ID, err)
	}
	if t.U, err = decodeFloats(r.u); err != nil {
		return t, fmt.Errorf("load trial %d: u: %w", t.ID, err)
	}
	if r.meta != "" {
		if err := json.Unmarshal([]byte(r.meta), &t.Meta); err != nil {
			return t, fmt.Errorf("load trial %d: meta: %w", t.ID, err)
		}
	}
	if r.outputs != "" {
		if t.Outputs, err = decodeFloats(r.outputs); err != nil {
			return t, fmt.Errorf("load trial %d: outputs: %w", t.ID, err)
		}
	}
	return t, nil
}

// sortedTrials returns the study's trial rows ordered by ID.
func (s *memStudy) sortedTrials() []*memTrial {
	out := make([]*memTrial, 0, len(s.trials))
	for _, t := range s.trials {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Trials is DB.Trials.
func (d *Memory) Trials(ctx context.Context, studyID int64) ([]Trial, error) {
	var out []Trial
	err := d.read(ctx, func() error {
		s := d.m.byID(studyID)
		if s == nil {
			return nil
		}
		for _, r := range s.sortedTrials() {
			t, err := r.trial()
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Iterations is DB.Iterations.
func (d *Memory) Iterations(ctx context.Context, studyID int64) ([]Iteration, error) {
	var out []Iteration
	err := d.read(ctx, func() error {
		s := d.m.byID(studyID)
		if s == nil {
			return nil
		}
		for _, it := range s.iters {
			c := *it
			c.Model, c.Record = cloneRaw(it.Model), cloneRaw(it.Record)
			out = append(out, c)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Iteration < out[j].Iteration })
		return nil
	})
	return out, err
}

// Attempts is DB.Attempts.
func (d *Memory) Attempts(ctx context.Context, studyID int64) ([]Attempt, error) {
	var out []Attempt
	err := d.read(ctx, func() error {
		if s := d.m.byID(studyID); s != nil {
			out = append(out, s.attempts...)
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].Trial < out[j].Trial
	})
	for i := range out {
		if v := out[i].Value; v != nil {
			c := *v
			out[i].Value = &c
		}
	}
	return out, err
}

// appendReported adds intermediate value p to r's (DB's appendReported):
// steps must increase.
func (r *memTrial) appendReported(p Intermediate) error {
	if n := len(r.intermediates); n > 0 && p.Step <= r.intermediates[n-1].Step {
		return fmt.Errorf("step %d after step %d: steps must increase: %w", p.Step, r.intermediates[n-1].Step, ErrConflict)
	}
	r.intermediates = append(r.intermediates, p)
	return nil
}
