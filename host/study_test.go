package host

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
	"github.com/tesbo/tesbo/tes"
)

func baseOptions(seed uint64) Options {
	return Options{Acquisition: "test-ucb", Proposer: testProposer(), Batch: 2, Iters: 4, Init: 3, Seed: seed}
}

// tempDB returns a new study database in a temporary directory, closed
// when the test ends.
func tempDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "t.db"), store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func sameTrials(t *testing.T, a, b []Trial) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("trial counts differ: %d vs %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || x.Iteration != y.Iteration || x.Index != y.Index || x.Status != y.Status ||
			math.Float64bits(x.Value) != math.Float64bits(y.Value) || x.Error != y.Error {
			t.Fatalf("trial %d differs:\n%+v\n%+v", i, x, y)
		}
		for j := range x.X {
			if math.Float64bits(x.X[j]) != math.Float64bits(y.X[j]) || math.Float64bits(x.U[j]) != math.Float64bits(y.U[j]) {
				t.Fatalf("trial %d coordinate %d differs: %v/%v vs %v/%v", i, j, x.X[j], x.U[j], y.X[j], y.U[j])
			}
		}
	}
}

func TestOptimizeRecords(t *testing.T) {
	var recs []Record
	o := baseOptions(1)
	o.OnIteration = func(r Record) { recs = append(recs, r) }
	obj := &branin{}
	res, err := Optimize(context.Background(), obj, o)
	if err != nil {
		t.Fatal(err)
	}
	if obj.params["noise_var"] != "0.0001" || obj.params["seed"] != "1" {
		t.Fatalf("Configure got %v", obj.params)
	}
	if len(recs) != o.Iters {
		t.Fatalf("%d records, want %d", len(recs), o.Iters)
	}
	if len(res.Trials) != o.Init+o.Iters*o.Batch || res.Evaluations != len(res.Trials) || res.Failures != 0 {
		t.Fatalf("result counts: %d trials, %d evals, %d failures", len(res.Trials), res.Evaluations, res.Failures)
	}
	for i, r := range recs {
		if r.Iter != i+1 || r.Evals != o.Init+(i+1)*o.Batch || len(r.Batch) != o.Batch || len(r.Values) != o.Batch {
			t.Fatalf("record %d: %+v", i, r)
		}
		// The batch is the iteration's trials, in native units.
		for k := range r.Batch {
			tr := res.Trials[o.Init+i*o.Batch+k]
			if tr.Iteration != i+1 || fmt.Sprint(tr.X) != fmt.Sprint(r.Batch[k]) || tr.Value != *r.Values[k] {
				t.Fatalf("record %d batch %d: %v %v vs trial %+v", i, k, r.Batch[k], *r.Values[k], tr)
			}
		}
		// best_x/best_value: the objective is noise-free-capable, so the
		// default (auto) refines x̄; best_value is a stored value when x̄
		// was evaluated and the noise-free f(x̄) otherwise.
		found := false
		for _, tr := range res.Trials[:r.Evals] {
			if fmt.Sprint(tr.X) == fmt.Sprint(r.BestX) && tr.Value == *r.BestValue {
				found = true
			}
		}
		if !found && math.Abs(*r.BestValue-braninF(r.BestX)) > 1e-12 {
			t.Fatalf("record %d: best %v %v is neither an evaluated point nor f(x̄)", i, r.BestX, *r.BestValue)
		}
		if r.Regret == nil || *r.Regret < 0 || math.Abs(*r.Regret-(braninOpt-braninF(r.BestX))) > 1e-12 {
			t.Fatalf("record %d: regret %v, want f*−f(x̄) = %v", i, r.Regret, braninOpt-braninF(r.BestX))
		}
		if r.FitS <= 0 || r.ProposeS <= 0 || r.EvalS < 0 {
			t.Fatalf("record %d timings: %+v", i, r)
		}
	}
}

func TestDeterminism(t *testing.T) {
	run := func(seed uint64) []Trial {
		res, err := Optimize(context.Background(), &branin{}, baseOptions(seed))
		if err != nil {
			t.Fatal(err)
		}
		return res.Trials
	}
	a, b := run(7), run(7)
	sameTrials(t, a, b)
	c := run(8)
	if fmt.Sprint(a[0].X) == fmt.Sprint(c[0].X) || fmt.Sprint(a[len(a)-1].X) == fmt.Sprint(c[len(c)-1].X) {
		t.Fatalf("different seeds gave the same points: %v %v", a[0].X, c[0].X)
	}
}

// A study driven by hand through Ask/Tell (evaluating in reverse order, one
// Ask per design point) produces exactly Optimize's trials.
func TestAskTellEqualsOptimize(t *testing.T) {
	o := baseOptions(11)
	want, err := Optimize(context.Background(), &branin{}, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	obj := &branin{}
	info, _ := obj.Info(ctx)
	obj.Configure(ctx, map[string]string{"noise_var": "0.0001", "seed": "11"})
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	for range o.Init {
		tr, err := s.Ask(ctx, 1)
		if err != nil || len(tr) != 1 || tr[0].Iteration != 0 {
			t.Fatalf("design ask: %v %+v", err, tr)
		}
		v, _ := obj.Evaluate(ctx, tr[0].X)
		if err := s.Tell(ctx, tr[0].ID, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	for it := 1; it <= o.Iters; it++ {
		tr, err := s.Ask(ctx, o.Batch)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(tr) - 1; i >= 0; i-- {
			v, _ := obj.Evaluate(ctx, tr[i].X)
			if err := s.Tell(ctx, tr[i].ID, v, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	sameTrials(t, want.Trials, s.Trials())
	if err := s.Tell(ctx, 0, 1, nil); !errors.Is(err, ErrNotInFlight) {
		t.Fatalf("telling a finished trial: %v", err)
	}
	if err := s.Tell(ctx, 999, 1, nil); !errors.Is(err, ErrNotInFlight) {
		t.Fatalf("telling an unknown trial: %v", err)
	}
}

// Interrupting a stored study at any point and resuming it gives exactly
// the uninterrupted run's trials.
func TestResumeExact(t *testing.T) {
	ctx := context.Background()
	o := baseOptions(5)
	want, err := Optimize(ctx, &branin{}, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, stopAfter := range []int64{1, 4, 6, 9} {
		t.Run(fmt.Sprint(stopAfter), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			db, err := store.Open(path, store.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			o := baseOptions(5)
			o.DB, o.Name = db, "st"
			o.Grace = -1
			cctx, cancel := context.WithCancel(ctx)
			obj := &branin{}
			var n atomic.Int64
			o.OnTrial = func(Trial) {
				if n.Add(1) == stopAfter {
					cancel()
				}
			}
			_, err = Optimize(cctx, obj, o)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v", err)
			}
			db.Close()
			// Simulate a kill between an iteration's last outcome and its
			// record: drop the newest record; resume must rebuild it.
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(`UPDATE iterations SET record=NULL WHERE iteration=(SELECT max(iteration) FROM iterations)`); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			db, err = store.Open(path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			s, err := OpenStudy(ctx, db, "st", Options{Proposer: testProposer()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(ctx, &branin{}); err != nil {
				t.Fatal(err)
			}
			sameTrials(t, want.Trials, s.Trials())
			stored, err := db.Study(ctx, "st")
			if err != nil {
				t.Fatal(err)
			}
			trials, _ := db.Trials(ctx, stored.ID)
			sameTrials(t, want.Trials, trials)
			its, _ := db.Iterations(ctx, stored.ID)
			if len(its) != o.Iters+1 {
				t.Fatalf("iterations stored: %d", len(its))
			}
			for _, it := range its[1:] {
				if it.Record == nil {
					t.Fatalf("iteration %d has no stored record", it.Iteration)
				}
			}
		})
	}
}

func TestFailuresRetriesTimeouts(t *testing.T) {
	ctx := context.Background()
	obj := funcObjective{info: unitInfo(2), f: func(ctx context.Context, x []float64) (float64, error) {
		switch {
		case x[0] < 0.2: // always fails
			return 0, errors.New("bad region")
		case x[0] < 0.4:
			return math.NaN(), nil
		case x[0] < 0.5: // hangs past the timeout, ignoring ctx
			time.Sleep(300 * time.Millisecond)
			return 1, nil
		}
		return -(x[0] - 0.7) * (x[0] - 0.7), nil
	}}
	o := Options{Proposer: randomProposer{}, Batch: 3, Iters: 5, Init: 4, Seed: 3, Retries: 1,
		RetryBackoff: time.Millisecond, EvalTimeout: 50 * time.Millisecond}
	res, err := Optimize(ctx, obj, o)
	if err != nil {
		t.Fatal(err)
	}
	var failed, complete int
	for _, tr := range res.Trials {
		switch {
		case tr.X[0] < 0.2:
			if tr.Status != Failed || !strings.Contains(tr.Error, "bad region") || tr.Attempts != 2 {
				t.Errorf("trial %+v", tr)
			}
		case tr.X[0] < 0.4:
			if tr.Status != Failed || !strings.Contains(tr.Error, "NaN") {
				t.Errorf("NaN trial %+v", tr)
			}
		case tr.X[0] < 0.5:
			if tr.Status != Failed || !strings.Contains(tr.Error, "timed out") {
				t.Errorf("slow trial %+v", tr)
			}
		default:
			if tr.Status != Complete || tr.Attempts != 1 {
				t.Errorf("good trial %+v", tr)
			}
		}
		if tr.Status == Failed {
			failed++
		} else {
			complete++
		}
	}
	if failed == 0 || complete == 0 || len(res.Trials) != 4+15 || res.Failures != failed {
		t.Fatalf("%d trials, %d failed, %d complete", len(res.Trials), failed, complete)
	}
}

// Retries recover transient failures.
func TestRetryRecovers(t *testing.T) {
	var calls atomic.Int64
	obj := funcObjective{info: unitInfo(1), f: func(ctx context.Context, x []float64) (float64, error) {
		if calls.Add(1)%2 == 1 {
			return 0, errors.New("transient")
		}
		return x[0], nil
	}}
	res, err := Optimize(context.Background(), obj, Options{Proposer: randomProposer{}, Batch: 1, Parallel: 1, Iters: 3, Init: 2, Retries: 2, RetryBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Status != Complete || tr.Attempts != 2 {
			t.Fatalf("trial %+v", tr)
		}
	}
}

// An objective that fails everywhere: every batch fails, the study still
// runs all its iterations (space-filling fallback) and records them.
func TestAllFailedContinues(t *testing.T) {
	obj := funcObjective{info: unitInfo(2), f: func(context.Context, []float64) (float64, error) {
		return 0, errors.New("down")
	}}
	var recs []Record
	res, err := Optimize(context.Background(), obj, Options{Proposer: testProposer(), Batch: 2, Iters: 3, Init: 2,
		OnIteration: func(r Record) { recs = append(recs, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 8 || res.Failures != 8 || len(recs) != 3 {
		t.Fatalf("%d trials, %d failures, %d records", len(res.Trials), res.Failures, len(recs))
	}
	for _, r := range recs {
		if r.BestValue != nil || r.BestX != nil || r.Values[0] != nil || r.Evals != 0 {
			t.Fatalf("record %+v", r)
		}
	}
	for i, a := range res.Trials {
		for _, b := range res.Trials[:i] {
			if fmt.Sprint(a.U) == fmt.Sprint(b.U) {
				t.Fatalf("duplicate points %v", a.U)
			}
		}
	}
}

// A proposer that always returns the same point gets distinct trials, in
// continuous and in integer spaces.
func TestDuplicatesNudged(t *testing.T) {
	cases := []sdk.Info{
		unitInfo(2),
		{Name: "ints", Params: []sdk.Param{{Name: "a", Kind: sdk.Int, Low: 0, High: 3}, {Name: "b", Kind: sdk.Int, Low: 0, High: 2}}},
		{Name: "mixed", Params: []sdk.Param{{Name: "a", Kind: sdk.Int, Low: 0, High: 1}, {Name: "b", Kind: sdk.Float, Low: 0, High: 1}}},
	}
	for _, info := range cases {
		t.Run(info.Name, func(t *testing.T) {
			obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) { return x[0] + x[1], nil }}
			res, err := Optimize(context.Background(), obj, Options{Proposer: constProposer{0.5}, Batch: 3, Iters: 3, Init: 2, Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Trials) != 11 {
				t.Fatalf("%d trials", len(res.Trials))
			}
			for i, a := range res.Trials {
				for _, b := range res.Trials[:i] {
					if fmt.Sprint(a.X) == fmt.Sprint(b.X) {
						t.Fatalf("duplicate point %v (trials %d)", a.X, i)
					}
				}
				if info.Name == "ints" && (a.X[0] != math.Round(a.X[0]) || a.X[1] != math.Round(a.X[1])) {
					t.Fatalf("non-integer %v", a.X)
				}
			}
		})
	}
}

func TestBadOptions(t *testing.T) {
	ctx := context.Background()
	ints := sdk.Info{Name: "ints", Params: []sdk.Param{{Name: "a", Kind: sdk.Int, Low: 0, High: 1}, {Name: "b", Kind: sdk.Int, Low: 0, High: 1}}}
	cases := []struct {
		name string
		info sdk.Info
		o    Options
		want string
	}{
		{"batch too large for integer space", ints, Options{Proposer: randomProposer{}, Batch: 5}, "larger than the 4 distinct points"},
		{"init too large for integer space", ints, Options{Proposer: randomProposer{}, Init: 5}, "larger than the 4 distinct points"},
		{"unknown acquisition", unitInfo(1), Options{Acquisition: "nope"}, "unknown acquisition"},
		{"negative batch", unitInfo(1), Options{Proposer: randomProposer{}, Batch: -1}, "batch"},
		{"negative retries", unitInfo(1), Options{Proposer: randomProposer{}, Retries: -1}, "retries"},
		{"bad kernel", unitInfo(1), Options{Proposer: randomProposer{}, Kernel: "rbf"}, "unknown kernel"},
		{"reserved param", unitInfo(1), Options{Proposer: randomProposer{}, Params: map[string]string{"seed": "1"}}, "reserved"},
		{"empty space", sdk.Info{Name: "e"}, Options{Proposer: randomProposer{}}, "space"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewStudy(ctx, c.info, c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	// --param for an objective that takes none.
	_, err := Optimize(ctx, funcObjective{info: unitInfo(1), f: func(context.Context, []float64) (float64, error) { return 0, nil }},
		Options{Proposer: randomProposer{}, Params: map[string]string{"a": "b"}})
	if err == nil || !strings.Contains(err.Error(), "takes no parameters, but 1 was given") {
		t.Fatalf("params for a non-configurable objective: %v", err)
	}
}

// A failing acquisition falls back to space-filling points; the study goes on.
func TestProposerFailureFallsBack(t *testing.T) {
	res, err := Optimize(context.Background(), &branin{}, Options{Proposer: failingProposer{}, Batch: 2, Iters: 2, Init: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 6 || res.Failures != 0 {
		t.Fatalf("%d trials %d failures", len(res.Trials), res.Failures)
	}
}

// Cancellation: the run stops, evaluations that finish within the grace
// period are recorded, the others stay in flight, and Run says so. The
// objective decides fast or slow by the order in which evaluations start
// (the first three of the batch of six are fast), so both cases occur
// whatever points the seed gives.
func TestCancelGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{}, 10)
	var mu sync.Mutex
	var order int
	fast := map[uint64]bool{} // x[0]'s bits → evaluated as fast
	obj := funcObjective{info: unitInfo(1), f: func(ectx context.Context, x []float64) (float64, error) {
		mu.Lock()
		order++
		isFast := order <= 3
		fast[math.Float64bits(x[0])] = isFast
		mu.Unlock()
		started <- struct{}{}
		if isFast {
			time.Sleep(20 * time.Millisecond) // finishes within the grace period
			return x[0], nil
		}
		<-ectx.Done() // finishes only when abandoned
		return 0, ectx.Err()
	}}
	o := Options{Proposer: randomProposer{}, NoInit: true, Batch: 6, Iters: 1, Seed: 2, Grace: 300 * time.Millisecond}
	go func() {
		for range 6 {
			<-started
		}
		cancel()
	}()
	t0 := time.Now()
	res, err := Optimize(ctx, obj, o)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("got %v", err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Fatalf("cancel took %v", el)
	}
	var nFast, nSlow int
	for _, tr := range res.Trials {
		isFast, ok := fast[math.Float64bits(tr.X[0])]
		switch {
		case !ok:
			t.Fatalf("trial %d was never evaluated: %+v", tr.ID, tr)
		case isFast:
			nFast++
			if tr.Status != Complete || tr.Value != tr.X[0] {
				t.Errorf("fast trial not recorded within grace: %+v", tr)
			}
		default:
			nSlow++
			if tr.Status.Done() {
				t.Errorf("slow trial should stay in flight: %+v", tr)
			}
		}
	}
	if nFast != 3 || nSlow != 3 || res.Evaluations != 3 || len(res.Trials) != 6 {
		t.Fatalf("%d fast and %d slow of %d trials, %d evaluations; want 3, 3, 6, 3", nFast, nSlow, len(res.Trials), res.Evaluations)
	}
}

// Many studies in one process at once (what bench does), sharing one
// database: each produces exactly its serial trials.
func TestParallelStudies(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	seeds := []uint64{1, 2, 3, 4}
	serial := make([][]Trial, len(seeds))
	for i, seed := range seeds {
		res, err := Optimize(ctx, &branin{}, baseOptions(seed))
		if err != nil {
			t.Fatal(err)
		}
		serial[i] = res.Trials
	}
	parallel := make([][]Trial, len(seeds))
	errs := make([]error, len(seeds))
	var wg sync.WaitGroup
	for i, seed := range seeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := baseOptions(seed)
			o.DB, o.Name = db, fmt.Sprint("p", seed)
			res, err := Optimize(ctx, &branin{}, o)
			if err == nil {
				parallel[i] = res.Trials
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i := range seeds {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		sameTrials(t, serial[i], parallel[i])
	}
}

// RecommendRefine maximizes the posterior mean over the cube: its mean is
// at least that of every evaluated point, and the record's best_value is
// the noise-free value at x̄.
func TestRecommendRefine(t *testing.T) {
	ctx := context.Background()
	o := baseOptions(3)
	o.Recommend = RecommendRefine
	var last Record
	o.OnIteration = func(r Record) { last = r }
	obj := &branin{}
	info, _ := obj.Info(ctx)
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, obj); err != nil {
		t.Fatal(err)
	}
	rec, err := s.Recommend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.refine = false
	recEv, err := s.Recommend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Mean < recEv.Mean-1e-12 {
		t.Fatalf("refined mean %v below the best evaluated mean %v", rec.Mean, recEv.Mean)
	}
	if rec.TrialID >= 0 {
		t.Fatalf("refinement returned the evaluated trial %d (test needs an unevaluated x̄)", rec.TrialID)
	}
	if rec.Mean <= recEv.Mean {
		t.Fatalf("refined mean %v does not exceed the best evaluated mean %v", rec.Mean, recEv.Mean)
	}
	if last.BestValue == nil || *last.BestValue != braninF(last.BestX) {
		t.Fatalf("refined record: best_value %v, want the noise-free f(%v) = %v", last.BestValue, last.BestX, braninF(last.BestX))
	}
	if last.Regret == nil || math.Abs(*last.Regret-(braninOpt-braninF(last.BestX))) > 1e-12 {
		t.Fatalf("regret %v", last.Regret)
	}
}

// noisyOnly hides the noise-free evaluation (and configuration) of an
// objective, like a real-world plugin.
type noisyOnly struct{ o sdk.Objective }

func (n noisyOnly) Info(ctx context.Context) (sdk.Info, error) { return n.o.Info(ctx) }
func (n noisyOnly) Evaluate(ctx context.Context, x []float64) (float64, error) {
	return n.o.Evaluate(ctx, x)
}

// RecommendAuto refines x̄ only for objectives that can be evaluated without
// noise; for the others best_x is always an evaluated point.
func TestRecommendAuto(t *testing.T) {
	for _, tc := range []struct {
		name   string
		obj    sdk.Objective
		refine bool
	}{
		{"noise-free capable", &branin{}, true},
		{"noisy only", noisyOnly{&branin{noiseVar: 1e-4}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(5)
			if o.Recommend != "" && o.Recommend != RecommendAuto {
				t.Fatalf("baseOptions sets Recommend %q", o.Recommend)
			}
			var recs []Record
			o.OnIteration = func(r Record) { recs = append(recs, r) }
			res, err := Optimize(context.Background(), tc.obj, o)
			if err != nil {
				t.Fatal(err)
			}
			unevaluated := 0
			for _, r := range recs {
				found := false
				for _, tr := range res.Trials[:r.Evals] {
					if fmt.Sprint(tr.X) == fmt.Sprint(r.BestX) {
						found = true
					}
				}
				if !found {
					unevaluated++
				}
			}
			if !tc.refine && unevaluated > 0 {
				t.Fatalf("%d recommendations are not evaluated points", unevaluated)
			}
			if tc.refine && unevaluated == 0 {
				t.Fatalf("no recommendation was refined away from the evaluated points")
			}
		})
	}
}

// The default acquisition is available to every importer of host, with no
// extra import, and comes from the registry like every other one: TES that
// delivers x̄ (tes.Deliver).
func TestDefaultAcquisitionRegistered(t *testing.T) {
	p, err := acq.Lookup(DefaultAcquisition, acq.Options{})
	if err != nil {
		t.Fatalf("default acquisition %q: %v", DefaultAcquisition, err)
	}
	if _, ok := p.(*tes.Deliver); !ok {
		t.Fatalf("default acquisition %T, want *tes.Deliver", p)
	}
}

// A noise-free study (NoiseVar < 0, stored as 0) configures its objective
// with noise_var 0 when it runs and again when it is reopened: the stored,
// already defaulted options must not be defaulted a second time (which
// turned 0 into the default 1e-4), and the values are then exactly f(x).
func TestNoiseFreeStudyStaysNoiseFree(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	o := baseOptions(8)
	o.DB, o.Name, o.Iters, o.NoiseVar = db, "nf", 2, -1
	check := func(obj *branin, trials []Trial) {
		t.Helper()
		if got := obj.params["noise_var"]; got != "0" {
			t.Fatalf("objective configured with noise_var %q, want 0", got)
		}
		for _, tr := range trials {
			if f := braninF(tr.X); tr.Value != f {
				t.Fatalf("trial %d: value %v, want the noise-free f(x) = %v", tr.ID, tr.Value, f)
			}
		}
	}
	obj := &branin{}
	info, _ := obj.Info(ctx)
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	check(obj, res.Trials)
	s.Close()
	s, err = OpenStudy(ctx, db, "nf", Options{Proposer: testProposer(), Iters: 3})
	if err != nil {
		t.Fatal(err)
	}
	obj = &branin{}
	if res, err = s.Run(ctx, obj); err != nil {
		t.Fatal(err)
	}
	check(obj, res.Trials)
}

// startupObjective bounds its own evaluations like a loader objective: each
// call first waits startup (a plugin process being restarted), then runs
// for run; its own limit, call, counts from after the start-up.
type startupObjective struct {
	funcObjective
	startup, run, call time.Duration
}

func (o startupObjective) EvalLimits() (call, startup time.Duration) { return o.call, 2 * o.startup }

func (o startupObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	select {
	case <-time.After(o.startup + o.run):
		return x[0], nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// An objective that bounds its evaluations itself gets its start-up time on
// top of the host's limit: an evaluation that runs within the limit once
// the objective is ready completes although start-up and run together
// exceed the limit, and the same objective without EvalLimits times out.
func TestEvalLimitLeavesStartup(t *testing.T) {
	ctx := context.Background()
	limit := 100 * time.Millisecond
	slow := startupObjective{funcObjective: funcObjective{info: unitInfo(1)},
		startup: 150 * time.Millisecond, run: 20 * time.Millisecond, call: limit}
	o := Options{Proposer: randomProposer{}, Iters: 1, Init: 2, Seed: 1, EvalTimeout: limit}
	res, err := Optimize(ctx, slow, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Status != Complete {
			t.Fatalf("trial %d: %v %q, want complete (start-up must not count against the limit)", tr.ID, tr.Status, tr.Error)
		}
	}
	// Without EvalLimits, and with an objective limit above the host's, the
	// host's limit counts everything.
	for name, obj := range map[string]sdk.Objective{
		"no EvalLimits":         struct{ funcObjective }{funcObjective{info: unitInfo(1), f: slow.Evaluate}},
		"objective limit above": startupObjective{funcObjective: slow.funcObjective, startup: slow.startup, run: slow.run, call: 2 * limit},
	} {
		res, err := Optimize(ctx, obj, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tr := res.Trials[0]; tr.Status != Failed || !strings.Contains(tr.Error, "timed out after 100ms") {
			t.Errorf("%s: trial 0 %v %q, want timed out after 100ms", name, tr.Status, tr.Error)
		}
	}
}
