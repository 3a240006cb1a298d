package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tesbo/tesbo/internal/testenv"
)

// The conformance suite: the same calls on every Storage — a SQLite file,
// a PostgreSQL database, memory — must give the same results. Each
// scenario writes what it observes (outcomes, errors by sentinel, trials
// bit for bit; times only as set or not) to a transcript, checks what it
// must, and the transcripts of all backends must be equal.

// transcript collects one backend's observations of a scenario.
type transcript struct {
	t     *testing.T
	lines []string
}

func (tr *transcript) add(format string, args ...any) {
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

// errClass names an error by the sentinels and types callers test for.
func errClass(err error) string {
	if err == nil {
		return "ok"
	}
	var held *LeaseHeldError
	var out []string
	if errors.As(err, &held) {
		out = append(out, "LeaseHeld("+held.Study+")")
	}
	for _, s := range []error{ErrNotFound, ErrExists, ErrConflict, ErrLeaseLost, context.Canceled} {
		if errors.Is(err, s) {
			out = append(out, s.Error())
		}
	}
	if out == nil {
		return "error"
	}
	return strings.Join(out, "+")
}

// must records err's class and fails the test unless it is want.
func (tr *transcript) must(what string, err error, want string) {
	tr.t.Helper()
	got := errClass(err)
	tr.add("%s: %s", what, got)
	if got != want {
		tr.t.Errorf("%s: %v (%s), want %s", what, err, got, want)
	}
}

func setOrNot(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return "set"
}

func bits(x []float64) string {
	if x == nil {
		return "nil"
	}
	var b strings.Builder
	for _, v := range x {
		fmt.Fprintf(&b, "%016x ", math.Float64bits(v))
	}
	return "[" + b.String() + "]"
}

// trials records the study's trials, every stored field bit for bit.
func (tr *transcript) trials(d Storage, studyID int64) []Trial {
	tr.t.Helper()
	ts, err := d.Trials(context.Background(), studyID)
	if err != nil {
		tr.t.Fatal(err)
	}
	for _, t := range ts {
		tr.add("trial %d it=%d idx=%d x=%s u=%s %s v=%016x err=%q att=%d c=%s s=%s f=%s eval=%016x meta=%v worker=%q inter=%s outputs=%s",
			t.ID, t.Iteration, t.Index, bits(t.X), bits(t.U), t.Status, math.Float64bits(t.Value), t.Error,
			t.Attempts, setOrNot(t.CreatedAt), setOrNot(t.StartedAt), setOrNot(t.FinishedAt),
			math.Float64bits(t.EvalSeconds), t.Meta, t.Worker, interBits(t.Intermediates), bits(t.Outputs))
	}
	return ts
}

func (tr *transcript) attempts(d Storage, studyID int64) {
	tr.t.Helper()
	as, err := d.Attempts(context.Background(), studyID)
	if err != nil {
		tr.t.Fatal(err)
	}
	for _, a := range as {
		v := "nil"
		if a.Value != nil {
			v = fmt.Sprint(*a.Value)
		}
		tr.add("attempt trial=%d n=%d outcome=%s value=%s err=%q at=%s", a.Trial, a.Attempt, a.Outcome, v, a.Error, setOrNot(a.At))
	}
}

type backend struct {
	name string
	open func(t *testing.T) Storage
}

// backends returns SQLite, memory and (unless PostgreSQL is missing
// outside CI) PostgreSQL.
func backends(t *testing.T) []backend {
	bs := []backend{
		{"sqlite", func(t *testing.T) Storage {
			d, err := Open(filepath.Join(t.TempDir(), "s.db"), Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			return d
		}},
		{"memory", func(*testing.T) Storage { return NewMemory() }},
	}
	pg := testenv.StartPostgres(t)
	return append(bs, backend{"postgres", func(t *testing.T) Storage {
		d, err := Open(pg.NewDatabase(t), Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}})
}

// TestStorageConformance runs every scenario on every backend and
// compares their transcripts with SQLite's.
func TestStorageConformance(t *testing.T) {
	bs := backends(t)
	for _, sc := range []struct {
		name string
		f    func(*transcript, Storage)
	}{
		{"Studies", conformStudies},
		{"TrialsBitwise", conformTrials},
		{"Lease", conformLease},
		{"LeaseTakeover", conformLeaseTakeover},
		{"Queue", conformQueue},
		{"QueueOnce", conformQueueOnce},
		{"Pruned", conformPruned},
		{"Reported", conformReported},
		{"Imported", conformImported},
		{"LeasedReports", conformLeasedReports},
	} {
		t.Run(sc.name, func(t *testing.T) {
			var first *transcript
			var firstName string
			for _, b := range bs {
				t.Run(b.name, func(t *testing.T) {
					tr := &transcript{t: t}
					sc.f(tr, b.open(t))
					if first == nil {
						first, firstName = tr, b.name
						return
					}
					if a, b := strings.Join(first.lines, "\n"), strings.Join(tr.lines, "\n"); a != b {
						t.Errorf("transcript differs from %s's:\n--- %s\n%s\n--- this\n%s", firstName, firstName, a, b)
					}
				})
			}
		})
	}
}

func conformStudy(tr *transcript, d Storage, name string) *Study {
	tr.t.Helper()
	s := &Study{Name: name, Objective: "synthetic/branin", Acquisition: "tes", Seed: math.MaxUint64 - 3,
		Space: json.RawMessage(`[{"name":"x0","lo":0,"hi":1}]`), Settings: json.RawMessage(`{"version":2}`)}
	tr.must("create "+name, d.CreateStudy(context.Background(), s), "ok")
	return s
}

func conformStudies(tr *transcript, d Storage) {
	ctx := context.Background()
	if names, err := d.StudyNames(ctx); err != nil || names != nil {
		tr.t.Fatalf("names of an empty database: %v %v", names, err)
	}
	_, err := d.Study(ctx, "a")
	tr.must("missing study", err, ErrNotFound.Error())
	a := conformStudy(tr, d, "a")
	conformStudy(tr, d, "b")
	tr.must("duplicate", d.CreateStudy(ctx, &Study{Name: "a", Space: json.RawMessage(`{}`), Settings: json.RawMessage(`{}`)}), ErrExists.Error())
	tr.must("no name", d.CreateStudy(ctx, &Study{Space: json.RawMessage(`{}`), Settings: json.RawMessage(`{}`)}), "error")
	names, err := d.StudyNames(ctx)
	tr.add("names %v %v", names, err)
	tr.must("update settings", d.UpdateSettings(ctx, a.ID, json.RawMessage(`{"version":2,"iters":9}`)), "ok")
	tr.must("update settings of no study", d.UpdateSettings(ctx, a.ID+100, json.RawMessage(`{}`)), ErrNotFound.Error())
	tr.must("update settings not JSON", d.UpdateSettings(ctx, a.ID, json.RawMessage(`{`)), "error")
	got, err := d.Study(ctx, "a")
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.add("study %q %q %q seed=%d space=%s settings=%s c=%s u=%s later=%v", got.Name, got.Objective, got.Acquisition,
		got.Seed, got.Space, got.Settings, setOrNot(got.CreatedAt), setOrNot(got.UpdatedAt), !got.UpdatedAt.Before(got.CreatedAt))
	if got.ID != a.ID || got.Seed != a.Seed || !got.CreatedAt.Equal(time.Unix(0, a.CreatedAt.UnixNano())) {
		tr.t.Errorf("study read back %+v, created %+v", got, a)
	}
	act, err := d.Activity(ctx, a.ID)
	tr.add("activity %+v max=%v last=%v %s", act.Trials, act.MaxValue, act.LastChange.Equal(got.CreatedAt), errClass(err))
	_, err = d.Study(ctx, strings.Repeat("z", 3))
	tr.must("missing study with others", err, ErrNotFound.Error())
	if !strings.Contains(err.Error(), `studies: "a", "b")`) {
		tr.t.Errorf("not-found error does not list the studies: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = d.Trials(cctx, a.ID)
	tr.must("cancelled read", err, context.Canceled.Error())
}

// awkward are coordinates whose bits a careless encoding would change.
var awkward = []float64{0, math.Copysign(0, -1), 1.0 / 3, math.SmallestNonzeroFloat64, math.MaxFloat64, -2.5e-310, 0.1 + 0.2}

func conformTrials(tr *transcript, d Storage) {
	ctx := context.Background()
	s := conformStudy(tr, d, "a")
	batch := []Trial{
		{ID: 0, Iteration: 0, Index: 0, X: awkward, U: []float64{0.5}},
		{ID: 1, Iteration: 0, Index: 1, X: []float64{1e300}, U: nil},
		{ID: 2, Iteration: 0, Index: 2, X: []float64{-1}, U: []float64{1}, Status: Running},
	}
	tr.must("add batch", d.AddBatch(ctx, s.ID, Iteration{Iteration: 0}, batch), "ok")
	tr.add("caller's batch %s %s %s", batch[0].Status, setOrNot(batch[0].CreatedAt), batch[2].Status)
	tr.must("same id", d.AddBatch(ctx, s.ID, Iteration{Iteration: 0}, []Trial{{ID: 1, Iteration: 1, X: []float64{0}, U: []float64{0}}}), ErrConflict.Error())
	tr.must("same slot", d.AddBatch(ctx, s.ID, Iteration{Iteration: 0}, []Trial{{ID: 7, Iteration: 0, Index: 1, X: []float64{0}, U: []float64{0}}}), ErrConflict.Error())
	tr.must("not finite", d.AddBatch(ctx, s.ID, Iteration{Iteration: 1}, []Trial{{ID: 8, Iteration: 1, X: []float64{math.Inf(1)}, U: []float64{0}}}), "error") // NaN is allowed: an inactive parameter (stored as null)
	tr.must("done at birth", d.AddBatch(ctx, s.ID, Iteration{Iteration: 1}, []Trial{{ID: 8, Iteration: 1, Status: Complete}}), "error")
	model := json.RawMessage(`{"ls":[0.25]}`)
	tr.must("add iteration 1", d.AddBatch(ctx, s.ID, Iteration{Iteration: 1, Model: model, FitSeconds: 0.125, ProposeSeconds: 1.5},
		[]Trial{{ID: 3, Iteration: 1, Index: 0, X: []float64{2}, U: []float64{0.75}}}), "ok")
	tr.must("start", d.StartTrial(ctx, s.ID, 0, 2, time.Now()), "ok")
	done := Trial{ID: 0, Status: Complete, Value: -math.SmallestNonzeroFloat64, Attempts: 2, EvalSeconds: 0.1 + 0.2,
		Meta: map[string]string{"k": "v", "bad": "\xff"}, Outputs: []float64{-math.SmallestNonzeroFloat64, 0.1 + 0.2, math.Copysign(0, -1)}}
	tr.must("finish complete", d.FinishTrial(ctx, s.ID, &done), "ok")
	tr.must("finish twice", d.FinishTrial(ctx, s.ID, &done), ErrConflict.Error())
	tr.must("start finished", d.StartTrial(ctx, s.ID, 0, 3, time.Now()), ErrConflict.Error())
	tr.must("start unknown", d.StartTrial(ctx, s.ID, 99, 1, time.Now()), ErrConflict.Error())
	tr.must("infinite value", d.FinishTrial(ctx, s.ID, &Trial{ID: 1, Status: Complete, Value: math.Inf(1)}), "error")
	tr.must("not final", d.FinishTrial(ctx, s.ID, &Trial{ID: 1, Status: Running}), "error")
	tr.must("infinite output", d.FinishTrial(ctx, s.ID, &Trial{ID: 1, Status: Complete, Value: 1, Outputs: []float64{1, math.NaN()}}), "error")
	failed := Trial{ID: 1, Status: Failed, Value: 7, Outputs: []float64{1, 2}, Error: "boom\x00" + strings.Repeat("é", MaxErrorBytes), Attempts: 1, StartedAt: time.Now()}
	tr.must("finish failed", d.FinishTrial(ctx, s.ID, &failed), "ok")
	tr.must("record", d.SetRecord(ctx, s.ID, 1, json.RawMessage(`{"best":-1}`)), "ok")
	tr.must("record of no iteration", d.SetRecord(ctx, s.ID, 5, json.RawMessage(`{}`)), ErrNotFound.Error())
	ts := tr.trials(d, s.ID)
	for i, want := range [][]float64{awkward, {1e300}, {-1}, {2}} {
		if bits(ts[i].X) != bits(want) {
			tr.t.Errorf("trial %d x = %v, want %v bit for bit", i, ts[i].X, want)
		}
	}
	if ts[0].Value != done.Value || ts[0].Meta["k"] != "v" || len(ts[1].Error) > MaxErrorBytes+40 ||
		bits(ts[0].Outputs) != bits(done.Outputs) || ts[1].Outputs != nil || ts[2].Outputs != nil {
		tr.t.Errorf("outcomes read back: %+v %+v", ts[0], ts[1])
	}
	its, err := d.Iterations(ctx, s.ID)
	if err != nil {
		tr.t.Fatal(err)
	}
	for _, it := range its {
		tr.add("iteration %d model=%s fit=%v propose=%v record=%s nilmodel=%v", it.Iteration, it.Model, it.FitSeconds,
			it.ProposeSeconds, it.Record, it.Model == nil)
	}
	act, err := d.Activity(ctx, s.ID)
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.add("activity trials=%d p=%d r=%d c=%d f=%d att=%d max=%v min=%v its=%d recs=%d last=%v",
		act.Trials, act.Pending, act.Running, act.Complete, act.Failed, act.Attempts, *act.MaxValue, *act.MinValue,
		act.Iterations, act.Records, !act.LastChange.Before(ts[1].FinishedAt))
	rec, err := d.LatestRecord(ctx, s.ID)
	tr.add("latest record %s %v", rec, err)
	p, r, f, err := d.QueueCounts(ctx, s.ID)
	tr.add("counts %d %d %d %v", p, r, f, err)
}

func conformLease(tr *transcript, d Storage) {
	ctx := context.Background()
	s := conformStudy(tr, d, "a")
	h1, h2 := NewHolder(), NewHolder()
	_, err := d.AcquireLease(ctx, s.ID+100, h1, time.Minute)
	tr.must("lease of no study", err, ErrNotFound.Error())
	tr.must("check lease of no study", d.CheckLease(ctx, s.ID+100), ErrNotFound.Error())
	tr.must("check free", d.CheckLease(ctx, s.ID), "ok")
	l1, err := d.AcquireLease(ctx, s.ID, h1, time.Minute)
	tr.must("acquire", err, "ok")
	_, took := l1.TookOver()
	tr.add("took over %v ttl %v holder %v", took, l1.TTL(), l1.Holder() == h1)
	_, err = d.AcquireLease(ctx, s.ID, h2, time.Minute)
	tr.must("second holder", err, `LeaseHeld(a)`)
	var held *LeaseHeldError
	if errors.As(err, &held) && (held.PID != h1.PID || !held.Expires.Equal(time.Unix(0, l1.Expires().UnixNano()))) {
		tr.t.Errorf("held %+v", held)
	}
	tr.must("check held", d.CheckLease(ctx, s.ID), "LeaseHeld(a)")
	_, err = d.AcquireLease(ctx, s.ID, h1, time.Minute)
	tr.must("same holder again", err, "ok")
	tr.must("renew", l1.Renew(ctx), "ok")
	w := l1.Storage()
	tr.must("fenced add", w.AddBatch(ctx, s.ID, Iteration{}, []Trial{{ID: 0, X: []float64{1}, U: []float64{1}}}), "ok")
	tr.must("fenced settings", w.UpdateSettings(ctx, s.ID, json.RawMessage(`{}`)), "ok")
	tr.must("release", l1.Release(ctx), "ok")
	tr.must("check released", d.CheckLease(ctx, s.ID), "ok")
	tr.must("fenced add after release", w.AddBatch(ctx, s.ID, Iteration{}, []Trial{{ID: 1, Index: 1, X: []float64{1}, U: []float64{1}}}), ErrLeaseLost.Error())
	tr.must("renew after release", l1.Renew(ctx), ErrLeaseLost.Error())
	l2, err := d.AcquireLease(ctx, s.ID, h2, time.Minute)
	tr.must("next holder", err, "ok")
	tr.must("old view finish", w.FinishTrial(ctx, s.ID, &Trial{ID: 0, Status: Complete, Value: 1}), ErrLeaseLost.Error())
	tr.must("new view finish", l2.Storage().FinishTrial(ctx, s.ID, &Trial{ID: 0, Status: Complete, Value: 1}), "ok")
	tr.must("unfenced reads", func() error { _, err := w.Trials(ctx, s.ID); return err }(), "ok")
	tr.trials(d, s.ID)
}

// conformLeaseTakeover: a holder that stops renewing is taken over once
// its lease expires; its renewals and fenced writes then fail.
func conformLeaseTakeover(tr *transcript, d Storage) {
	ctx := context.Background()
	s := conformStudy(tr, d, "a")
	old, err := d.AcquireLease(ctx, s.ID, NewHolder(), 20*time.Millisecond)
	tr.must("acquire short", err, "ok")
	time.Sleep(40 * time.Millisecond)
	tr.must("check expired", d.CheckLease(ctx, s.ID), "ok")
	l, err := d.AcquireLease(ctx, s.ID, NewHolder(), time.Minute)
	tr.must("take over", err, "ok")
	prev, took := l.TookOver()
	tr.add("took over %v same %v", took, prev.ID == old.Holder().ID)
	err = old.Renew(ctx)
	tr.must("old renews", err, ErrLeaseLost.Error())
	if err != nil && !strings.Contains(err.Error(), `took study "a" over`) {
		tr.t.Errorf("old holder's renewal: %v", err)
	}
	tr.must("old writes", old.Storage().AddBatch(ctx, s.ID, Iteration{}, []Trial{{ID: 0, X: []float64{0}, U: []float64{0}}}), ErrLeaseLost.Error())
	tr.must("old releases", old.Release(ctx), "ok")
	tr.must("new renews", l.Renew(ctx), "ok")
}

func conformQueue(tr *transcript, d Storage) {
	ctx := context.Background()
	s := conformStudy(tr, d, "a")
	var batch []Trial
	for i := range 4 {
		batch = append(batch, Trial{ID: i, Index: i, X: []float64{float64(i) / 3}, U: []float64{float64(i) / 7}})
	}
	tr.must("add", d.AddBatch(ctx, s.ID, Iteration{}, batch), "ok")
	w1, w2 := NewHolder(), NewHolder()
	tr.must("register", d.RegisterWorker(ctx, s.ID, w1, 2, time.Minute), "ok")
	tr.must("register again", d.RegisterWorker(ctx, s.ID, w1, 3, time.Minute), "ok")
	tr.must("heartbeat registers", d.Heartbeat(ctx, s.ID, w2, 1, time.Minute), "ok")
	ws, err := d.Workers(ctx, s.ID)
	tr.add("workers %d %v", len(ws), err)
	if len(ws) == 2 {
		tr.add("worker slots %d %d first=%v", ws[0].Slots, ws[1].Slots, ws[0].ID == w1.ID)
	}
	reg, err := d.WorkerRegistered(ctx, s.ID, w1.Host, w1.PID)
	tr.add("registered %v %v", reg, err)
	reg, _ = d.WorkerRegistered(ctx, s.ID, "elsewhere", 1)
	tr.add("registered elsewhere %v", reg)
	lease := func(h Holder, ttl time.Duration) *Trial {
		t, err := d.LeaseTrial(ctx, s.ID, h, ttl)
		if err != nil {
			tr.t.Fatal(err)
		}
		if t == nil {
			tr.t.Fatalf("lease: the queue is empty")
		}
		tr.add("lease: trial %d att=%d x=%s u=%s %s worker-is-holder=%v started=%s", t.ID, t.Attempts, bits(t.X), bits(t.U),
			t.Status, t.Worker == h.Name(), setOrNot(t.StartedAt))
		return t
	}
	report := func(what string, h Holder, t Trial, maxAttempts int) {
		ok, err := d.ReportTrial(ctx, s.ID, h, &t, maxAttempts)
		tr.add("report %s: accepted=%v %s", what, ok, errClass(err))
	}
	t0 := lease(w1, time.Minute)
	t1 := lease(w1, time.Minute)
	t2 := lease(w2, time.Millisecond) // its lease lapses at once
	t0.Status, t0.Value, t0.Meta, t0.EvalSeconds, t0.Outputs = Complete, 1.0/3, map[string]string{"m": "1"}, 0.5, []float64{1.0 / 3, -7e-300}
	report("complete", w1, *t0, 3)
	report("again", w1, *t0, 3)      // a retried commit: accepted once more
	report("by another", w2, *t0, 3) // not the holder: late
	t1.Status, t1.Error = Failed, "transient"
	report("failed, attempts left", w1, *t1, 2)
	time.Sleep(5 * time.Millisecond)
	n, err := d.ReclaimTrials(ctx, s.ID, 3)
	tr.add("reclaimed %d %v", n, err)
	t2.Status, t2.Value = Complete, 9
	report("after reclaim", w2, *t2, 3) // its lease was reclaimed: late
	p, r, f, _ := d.QueueCounts(ctx, s.ID)
	tr.add("counts %d %d %d", p, r, f)
	t1 = lease(w1, time.Minute) // back in the queue, second attempt
	t1.Status, t1.Error = Failed, "again"
	report("failed, no attempts left", w1, *t1, 2)
	lease(w1, time.Millisecond) // trial 2 again, its lease lapsing at once
	time.Sleep(5 * time.Millisecond)
	n, _ = d.ReclaimTrials(ctx, s.ID, 2) // attempt 2 of 2: failed for good
	tr.add("reclaimed %d", n)
	t3 := lease(w2, time.Minute)
	tr.must("heartbeat", d.Heartbeat(ctx, s.ID, w2, 1, time.Minute), "ok")
	tr.must("unregister", d.UnregisterWorker(ctx, s.ID, w2), "ok")
	n, _ = d.ReclaimTrials(ctx, s.ID, 2) // its trial goes back at once
	tr.add("reclaimed after unregister %d (trial %d)", n, t3.ID)
	lease(w1, time.Minute)
	if t, err := d.LeaseTrial(ctx, s.ID, w1, time.Minute); t != nil || err != nil {
		tr.t.Errorf("lease from an empty queue: %+v, %v", t, err)
	}
	p, r, f, _ = d.QueueCounts(ctx, s.ID)
	tr.add("counts %d %d %d", p, r, f)
	ok, err := d.ReportTrial(ctx, s.ID, w1, &Trial{ID: 99, Status: Complete, Value: 1}, 3)
	tr.add("report unknown: %v %s", ok, errClass(err))
	_, err = d.ReportTrial(ctx, s.ID, w1, &Trial{ID: 3, Status: Complete, Value: math.NaN()}, 3)
	tr.must("report NaN", err, "error")
	tr.trials(d, s.ID)
	tr.attempts(d, s.ID)
	act, _ := d.Activity(ctx, s.ID)
	tr.add("activity attempts %d", act.Attempts)
}

// conformQueueOnce: workers leasing concurrently take every trial exactly
// once.
func conformQueueOnce(tr *transcript, d Storage) {
	ctx := context.Background()
	s := conformStudy(tr, d, "a")
	const n = 40
	var batch []Trial
	for i := range n {
		batch = append(batch, Trial{ID: i, Index: i, X: []float64{float64(i)}, U: []float64{0}})
	}
	tr.must("add", d.AddBatch(ctx, s.ID, Iteration{}, batch), "ok")
	var mu sync.Mutex
	var got []int
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := NewHolder()
			for {
				t, err := d.LeaseTrial(ctx, s.ID, h, time.Minute)
				if err != nil {
					tr.t.Error(err)
					return
				}
				if t == nil {
					return
				}
				t.Status, t.Value = Complete, t.X[0]
				if ok, err := d.ReportTrial(ctx, s.ID, h, t, 1); !ok || err != nil {
					tr.t.Errorf("report %d: %v %v", t.ID, ok, err)
				}
				mu.Lock()
				got = append(got, t.ID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Ints(got)
	tr.add("leased %v", got)
	if len(got) != n {
		tr.t.Errorf("leased %d trials, want %d each once: %v", len(got), n, got)
	}
	for i, id := range got {
		if id != i {
			tr.t.Fatalf("trial %d leased twice or never: %v", i, got)
		}
	}
	tr.trials(d, s.ID)
}
