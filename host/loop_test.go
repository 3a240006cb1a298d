package host

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/store"
)

// newDataset keeps exactly the complete trials, in ID order, and
// standardizes their values (negated for a minimizing objective); pending,
// running and failed trials never reach the GP, whatever Value they carry.
func TestDatasetOnlyComplete(t *testing.T) {
	u := func(v float64) []float64 { return []float64{v, 1 - v} }
	trials := []Trial{
		{ID: 0, U: u(0.1), Status: Complete, Value: 3},
		{ID: 1, U: u(0.2), Status: Failed, Value: 1e6, Error: "boom"},
		{ID: 2, U: u(0.3), Status: Pending},
		{ID: 3, U: u(0.4), Status: Complete, Value: -1},
		{ID: 4, U: u(0.5), Status: Running, Value: 7},
		{ID: 5, U: u(0.6), Status: Failed, Value: math.NaN(), Error: "objective returned NaN"},
		{ID: 6, U: u(0.7), Status: Complete, Value: 4},
	}
	for _, minimize := range []bool{false, true} {
		ds := newDataset(trials, 2, minimize)
		if ds.n() != 3 || len(ds.ids) != 3 || ds.ids[0] != 0 || ds.ids[1] != 3 || ds.ids[2] != 6 {
			t.Fatalf("minimize=%v: ids %v, want [0 3 6]", minimize, ds.ids)
		}
		s := 1.0
		if minimize {
			s = -1
		}
		// Mean and sample standard deviation of s·(3, −1, 4).
		m := s * 2
		sd := math.Sqrt(((3-2)*(3-2) + (-1-2)*(-1-2) + (4-2)*(4-2)) / 2.0)
		for i, id := range ds.ids {
			want := (s*trials[id].Value - m) / sd
			if math.Abs(ds.y[i]-want) > 1e-12 {
				t.Fatalf("minimize=%v: y[%d] = %v, want %v", minimize, i, ds.y[i], want)
			}
			if math.Abs(ds.native(ds.y[i])-trials[id].Value) > 1e-12 {
				t.Fatalf("native(y[%d]) = %v, want %v", i, ds.native(ds.y[i]), trials[id].Value)
			}
			for j, v := range ds.X.RawRowView(i) {
				if v != trials[id].U[j] {
					t.Fatalf("row %d is %v, want trial %d's %v", i, ds.X.RawRowView(i), id, trials[id].U)
				}
			}
		}
	}
}

// An objective returning +Inf, −Inf or NaN, or an error, fails the trial
// (with the reason recorded), and no fit ever sees a failed trial: every
// data set handed to the GP holds only complete trials, with the values
// standardized from those trials alone.
func TestFailedTrialsNeverReachGP(t *testing.T) {
	ctx := context.Background()
	// With one worker the trials run in ID order, so call k evaluates
	// trial k−1 (no retries).
	bad := map[int64]struct {
		v    float64
		err  error
		want string
	}{
		1: {math.Inf(1), nil, "+Inf"},
		2: {math.Inf(-1), nil, "-Inf"},
		3: {math.NaN(), nil, "NaN"},
		4: {0, errors.New("crashed"), "crashed"},
		8: {math.Inf(1), nil, "+Inf"}, // in a BO iteration
	}
	var calls atomic.Int64
	obj := funcObjective{info: unitInfo(2), f: func(_ context.Context, x []float64) (float64, error) {
		if b, ok := bad[calls.Add(1)]; ok {
			return b.v, b.err
		}
		return -(x[0]-0.3)*(x[0]-0.3) - x[1], nil
	}}
	info, _ := obj.Info(ctx)
	s, err := NewStudy(ctx, info, Options{Proposer: testProposer(), Batch: 2, Parallel: 1, Iters: 3, Init: 6, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen [][]int
	var seenY [][]float64
	var seenX []*mat.Dense
	s.testHooks().fit = func(_ context.Context, ds *dataset, warm *modelState, it int) (*fitResult, error) {
		mu.Lock()
		seen = append(seen, append([]int(nil), ds.ids...))
		seenY = append(seenY, append([]float64(nil), ds.y...))
		seenX = append(seenX, mat.DenseCopyOf(ds.X))
		mu.Unlock()
		return s.fitModel(context.Background(), ds, warm, it)
	}
	res, err := s.Run(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 6+3*2 || res.Failures != len(bad) {
		t.Fatalf("%d trials, %d failures; want 12 and %d", len(res.Trials), res.Failures, len(bad))
	}
	for _, tr := range res.Trials {
		b, isBad := bad[int64(tr.ID+1)]
		switch {
		case isBad && (tr.Status != Failed || !strings.Contains(tr.Error, b.want)):
			t.Fatalf("trial %d: status %v error %q, want failed with %q", tr.ID, tr.Status, tr.Error, b.want)
		case !isBad && tr.Status != Complete:
			t.Fatalf("trial %d: %+v, want complete", tr.ID, tr)
		}
	}
	if len(seen) < 3 {
		t.Fatalf("only %d fits", len(seen))
	}
	for k, ids := range seen {
		var vals []float64
		for i, id := range ids {
			tr := res.Trials[id]
			if tr.Status != Complete {
				t.Fatalf("fit %d saw trial %d (%v, %q)", k, id, tr.Status, tr.Error)
			}
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("fit %d: ids %v not in increasing order", k, ids)
			}
			for j, v := range seenX[k].RawRowView(i) {
				if v != tr.U[j] {
					t.Fatalf("fit %d row %d: %v, want trial %d's %v", k, i, seenX[k].RawRowView(i), id, tr.U)
				}
			}
			vals = append(vals, tr.Value)
		}
		var m, ss float64
		for _, v := range vals {
			m += v
		}
		m /= float64(len(vals))
		for _, v := range vals {
			ss += (v - m) * (v - m)
		}
		sd := math.Sqrt(ss / float64(len(vals)-1))
		for i, v := range vals {
			if y := seenY[k][i]; math.IsNaN(y) || math.IsInf(y, 0) || math.Abs(y-(v-m)/sd) > 1e-12 {
				t.Fatalf("fit %d: y[%d] = %v, want %v", k, i, y, (v-m)/sd)
			}
		}
	}
	// The last fit (the final recommendation) saw every complete trial.
	last := seen[len(seen)-1]
	if len(last) != res.Evaluations {
		t.Fatalf("last fit saw %d trials, %d are complete", len(last), res.Evaluations)
	}
}

// Tell turns non-finite values into failures too.
func TestTellNonFiniteFails(t *testing.T) {
	ctx := context.Background()
	s, err := NewStudy(ctx, unitInfo(1), Options{Proposer: randomProposer{}, Init: 4, Iters: 1})
	if err != nil {
		t.Fatal(err)
	}
	trs, err := s.Ask(ctx, 0)
	if err != nil || len(trs) != 4 {
		t.Fatalf("ask: %v, %d trials", err, len(trs))
	}
	vals := []float64{math.Inf(1), math.Inf(-1), math.NaN(), 0.5}
	for i, tr := range trs {
		if err := s.Tell(ctx, tr.ID, vals[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Trials()
	for i, v := range vals[:3] {
		if got[i].Status != Failed || !strings.Contains(got[i].Error, "objective returned") {
			t.Fatalf("told %v: %+v, want a failure", v, got[i])
		}
	}
	if got[3].Status != Complete || got[3].Value != 0.5 {
		t.Fatalf("told 0.5: %+v", got[3])
	}
	if ds := newDataset(got, 1, false); ds.n() != 1 || ds.ids[0] != 3 {
		t.Fatalf("data set ids %v, want [3]", ds.ids)
	}
}

// Retries wait RetryBackoff before the first retry and twice that before
// the second. Only lower bounds are asserted: a loaded machine can make the
// waits longer, never shorter.
func TestRetryBackoffWaits(t *testing.T) {
	const backoff = 40 * time.Millisecond
	var mu sync.Mutex
	var starts []time.Time
	obj := funcObjective{info: unitInfo(1), f: func(_ context.Context, x []float64) (float64, error) {
		mu.Lock()
		starts = append(starts, time.Now())
		n := len(starts)
		mu.Unlock()
		if n <= 2 {
			return 0, errors.New("transient")
		}
		return x[0], nil
	}}
	res, err := Optimize(context.Background(), obj, Options{Proposer: randomProposer{}, Batch: 1, Parallel: 1,
		Init: 1, Iters: 1, Retries: 2, RetryBackoff: backoff})
	if err != nil {
		t.Fatal(err)
	}
	if len(starts) != 4 || res.Trials[0].Status != Complete || res.Trials[0].Attempts != 3 || res.Trials[1].Attempts != 1 {
		t.Fatalf("%d calls; trials %+v", len(starts), res.Trials)
	}
	if gap := starts[1].Sub(starts[0]); gap < backoff {
		t.Fatalf("first retry started %v after the first attempt, want ≥ %v", gap, backoff)
	}
	if gap := starts[2].Sub(starts[1]); gap < 2*backoff {
		t.Fatalf("second retry started %v after the first retry, want ≥ %v", gap, 2*backoff)
	}
}

// The GP fit of iteration k starts from the hyper-parameters fitted at
// iteration k−1 — the ones stored with that iteration, also after the study
// is reopened — and the first fit has no warm start.
func TestWarmStartChain(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	type fitCall struct {
		iter int
		warm []float64 // warm start's kernel log-parameters and noise; nil if none
	}
	var calls []fitCall
	hook := func(s *Study) {
		s.testHooks().fit = func(_ context.Context, ds *dataset, warm *modelState, it int) (*fitResult, error) {
			s.testHooks().gpFit = func(X *mat.Dense, y []float64, fs gp.FitSettings) (*gp.GP, error) {
				c := fitCall{iter: it}
				if fs.Warm != nil {
					c.warm = append(fs.Warm.Kernel().Params(), fs.Warm.NoiseVar())
				}
				calls = append(calls, c)
				return gp.Fit(X, y, fs)
			}
			return s.fitModel(context.Background(), ds, warm, it)
		}
	}
	check := func(s *Study, from, to int) {
		t.Helper()
		its, err := db.Iterations(ctx, s.id)
		if err != nil {
			t.Fatal(err)
		}
		stored := map[int][]float64{}
		for _, it := range its {
			var ms modelState
			if it.Model == nil {
				continue
			}
			if err := json.Unmarshal(it.Model, &ms); err != nil {
				t.Fatal(err)
			}
			if ms.Fallback != "" {
				t.Fatalf("iteration %d fell back (%s); the test needs fitted models", it.Iteration, ms.Fallback)
			}
			stored[it.Iteration] = append(ms.Params, ms.Noise)
		}
		iters := map[int]bool{}
		for _, c := range calls {
			iters[c.iter] = true
			want := stored[c.iter-1]
			if len(c.warm) != len(want) {
				t.Fatalf("fit of iteration %d: warm start %v, want iteration %d's model %v", c.iter, c.warm, c.iter-1, want)
			}
			for j := range want {
				if math.Float64bits(c.warm[j]) != math.Float64bits(want[j]) {
					t.Fatalf("fit of iteration %d: warm start %v, want iteration %d's model %v", c.iter, c.warm, c.iter-1, want)
				}
			}
		}
		for it := from; it <= to; it++ {
			if !iters[it] {
				t.Fatalf("no fit recorded for iteration %d (fits: %+v)", it, calls)
			}
		}
	}
	o := baseOptions(6)
	o.DB, o.Name, o.Iters = wrap(db), "w", 3
	obj := &branin{}
	info, _ := obj.Info(ctx)
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	hook(s)
	if _, err := s.Run(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if calls[0].iter != 1 || calls[0].warm != nil {
		t.Fatalf("first fit %+v: want iteration 1 without a warm start", calls[0])
	}
	check(s, 2, 3)
	// Reopened with a larger budget: the first fit starts from the stored
	// model of iteration 3.
	calls = nil
	s.Close()
	s, err = OpenStudy(ctx, wrap(db), "w", Options{Proposer: testProposer(), Iters: 5})
	if err != nil {
		t.Fatal(err)
	}
	hook(s)
	if _, err := s.Run(ctx, &branin{}); err != nil {
		t.Fatal(err)
	}
	if calls[0].iter != 4 || calls[0].warm == nil {
		t.Fatalf("first fit after reopening %+v: want iteration 4 from iteration 3's model", calls[0])
	}
	check(s, 4, 5)
}

// Options.Recommend = refine applies to a Study driven by Ask/Tell (no
// objective): x̄ is the posterior-mean maximizer over the cube, not an
// evaluated point, also after the study is reopened; the default (auto)
// without an objective recommends an evaluated point. Neither changes the
// trials.
func TestRecommendRefineAskTell(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	obj := &branin{}
	info, _ := obj.Info(ctx)
	obj.Configure(ctx, map[string]string{"noise_var": "0.0001", "seed": "3"})
	drive := func(o Options) *Study {
		s, err := NewStudy(ctx, info, o)
		if err != nil {
			t.Fatal(err)
		}
		for !s.Done() {
			askTell(t, s, obj)
		}
		return s
	}
	o := baseOptions(3)
	o.Recommend, o.DB, o.Name = RecommendRefine, wrap(db), "refine"
	ref := drive(o)
	auto := drive(baseOptions(3))
	sameTrials(t, auto.Trials(), ref.Trials())

	rRef, err := ref.Recommend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rAuto, err := auto.Recommend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rAuto.TrialID < 0 || rAuto.Value == nil {
		t.Fatalf("auto without an objective recommended an unevaluated point %+v", rAuto)
	}
	if rRef.TrialID >= 0 || rRef.Value != nil {
		t.Fatalf("refine recommended the evaluated trial %d (test needs an unevaluated x̄)", rRef.TrialID)
	}
	if !(rRef.Mean > rAuto.Mean) {
		t.Fatalf("refined posterior mean %v does not exceed the best evaluated one %v", rRef.Mean, rAuto.Mean)
	}
	ref.Close()
	reopened, err := OpenStudy(ctx, wrap(db), "refine", Options{Proposer: testProposer()})
	if err != nil {
		t.Fatal(err)
	}
	rRe, err := reopened.Recommend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rRe.TrialID != -1 || len(rRe.U) != len(rRef.U) {
		t.Fatalf("reopened study recommends %+v, want the refined %+v", rRe, rRef)
	}
	for j := range rRe.U {
		if math.Float64bits(rRe.U[j]) != math.Float64bits(rRef.U[j]) {
			t.Fatalf("reopened study recommends %v, want the refined %v", rRe.U, rRef.U)
		}
	}
}

// The posterior-mean search starts from the suggested point too: with a
// narrow peak at one observation, which no raw sample comes near, only that
// start finds it.
func TestMeanSearchStartsAtBestEvaluated(t *testing.T) {
	const d = 4
	x0 := []float64{0.31, 0.72, 0.55, 0.18}
	g, err := gp.New(gp.NewSE([]float64{0.01, 0.01, 0.01, 0.01}, 1), 1e-4, mat.NewDense(1, d, x0), []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	peak, _ := g.MeanVar(x0)
	if peak < 0.99 {
		t.Fatalf("μ(x0) = %v", peak)
	}
	// Without the start every search sits where μ ≈ 0.
	_, without, err := acqMaximizeMean(acq.PosteriorMean{GP: g}, d)
	if err != nil {
		t.Fatal(err)
	}
	if without > 0.5 {
		t.Fatalf("the raw samples alone found the peak (μ = %v): the test needs a narrower one", without)
	}
	X, with, err := acqMaximizeMean(acq.PosteriorMean{GP: g, Start: mat.NewDense(1, d, x0)}, d)
	if err != nil {
		t.Fatal(err)
	}
	if with < peak-1e-9 {
		t.Fatalf("search with the start found μ = %v at %v, want ≥ μ(x0) = %v", with, X.RawRowView(0), peak)
	}
	if st := (acq.PosteriorMean{GP: g, Start: mat.NewDense(1, d, x0)}).Starts(2); st != nil {
		t.Fatalf("starts for q = 2: %v", st)
	}
}

// acqMaximizeMean runs the recommendation's search (as recommendLocked
// does) on f with a fixed stream.
func acqMaximizeMean(f acq.PosteriorMean, d int) (*mat.Dense, float64, error) {
	return acq.Maximize(context.Background(), f, 1, d, acq.OptimizeSettings{}, streamRand(1, 1, streamRecommend))
}

// A database with an older schema, opened with DeferMigration, is left
// untouched when NewStudy refuses an existing name, and migrated when a
// study is created or reopened.
func TestDeferredMigration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "old.db")
	db, err := store.Open(path, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	o := baseOptions(2)
	o.DB, o.Name, o.Iters = wrap(db), "old", 1
	obj := &branin{}
	info, _ := obj.Info(ctx)
	s0, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	s0.Close()
	db.Close()
	// Back to schema version 1 (no iterations table).
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DROP TABLE intermediates; ALTER TABLE trials DROP COLUMN step; DROP TABLE workers; DROP TABLE trial_attempts; DROP INDEX trials_queue; ALTER TABLE trials DROP COLUMN worker; ALTER TABLE trials DROP COLUMN holder; ALTER TABLE trials DROP COLUMN lease_expires; ALTER TABLE trials DROP COLUMN outputs; DROP TABLE iterations; UPDATE tesbo_meta SET value='1' WHERE key='schema_version'`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	read := func() []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := read()
	open := func() *store.DB {
		db, err := store.Open(path, store.Options{DeferMigration: true})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db = open()
	o.DB = wrap(db)
	if _, err := NewStudy(ctx, info, o); !errors.Is(err, store.ErrExists) {
		t.Fatalf("NewStudy with a taken name: %v, want ErrExists", err)
	}
	db.Close()
	if !bytes.Equal(before, read()) {
		t.Fatal("refusing a taken name changed the database")
	}
	db = open()
	defer db.Close()
	s, err := OpenStudy(ctx, wrap(db), "old", Options{Proposer: testProposer()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, obj); err != nil {
		t.Fatal(err)
	}
	its, err := db.Iterations(ctx, s.id)
	if err != nil || len(its) != 2 {
		t.Fatalf("after migration: %d iteration rows, %v", len(its), err)
	}
	if len(s.Trials()) != o.Init+o.Batch {
		t.Fatalf("%d trials", len(s.Trials()))
	}
}
