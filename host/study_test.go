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
			o.DB, o.Name = wrap(db), "st"
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
			s, err := OpenStudy(ctx, wrap(db), "st", Options{Proposer: testProposer()})
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
			sameTrials(t, want.Trials, fromStoreTrials(trials))
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
			o.DB, o.Name = wrap(db), fmt.Sprint("p", seed)
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

// A nil or zero-value *Storage is refused with an error at every entry
// point that takes one, not a nil-pointer panic at the first read.
func TestNoStorageRefused(t *testing.T) {
	ctx := context.Background()
	for _, st := range []*Storage{nil, {}} {
		if _, err := OpenStudy(ctx, st, "s", Options{}); !errors.Is(err, errNoStorage) {
			t.Errorf("OpenStudy(%v): %v", st, err)
		}
		if _, err := LoadPosterior(ctx, st, "s", 10); !errors.Is(err, errNoStorage) {
			t.Errorf("LoadPosterior(%v): %v", st, err)
		}
		if _, _, err := StoredSettings(ctx, st, "s"); !errors.Is(err, errNoStorage) {
			t.Errorf("StoredSettings(%v): %v", st, err)
		}
	}
	if _, err := NewStudy(ctx, unitInfo(1), Options{DB: &Storage{}}); !errors.Is(err, errNoStorage) {
		t.Errorf("NewStudy with a zero Storage: %v", err)
	}
}
