package host

import (
	"context"
	"database/sql"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
)

// sourceStudy runs a finished study "old" of obj in db and returns its
// trials.
func sourceStudy(t *testing.T, db *Storage, obj sdk.Objective, o Options) []Trial {
	t.Helper()
	o.DB, o.Name, o.Grace = db, "old", -1
	res, err := Optimize(context.Background(), obj, o)
	if err != nil {
		t.Fatal(err)
	}
	return res.Trials
}

// A study warm-started from another's trials (as observations) fits its
// first model on exactly those trials: the hyper-parameters it fitted are
// bitwise those of a study given the same trials by Attach, and so is its
// first proposal with ei. The default acquisition's first proposal is x̄,
// the maximizer of that model's posterior mean (warmStartProposesXBar),
// where the study given the trials by Attach (not warm-started) proposes
// TES's query. The imported trials are marked, use up no budget, and the
// source study is unchanged.
func TestWarmStartFirstModel(t *testing.T) {
	ctx := context.Background()
	for _, acqName := range []string{"tes", "ei"} {
		t.Run(acqName, func(t *testing.T) {
			db := MemoryStorage()
			old := sourceStudy(t, db, hartmann6(), Options{Acquisition: "ei", Iters: 6, Init: 4, Seed: 3})
			o := Options{Acquisition: acqName, Iters: 2, NoInit: true, Seed: 8}
			w := o
			w.DB, w.Name, w.WarmStart = db, "new", []string{"old"}
			warm, err := NewStudy(ctx, unitInfo(6), w)
			if err != nil {
				t.Fatal(err)
			}
			defer warm.Close()
			ref, err := NewStudy(ctx, unitInfo(6), o)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range old {
				if _, err := ref.Attach(ctx, tr.X, tr.Value); err != nil {
					t.Fatal(err)
				}
			}
			got := warm.Trials()
			if len(got) != len(old) {
				t.Fatalf("%d trials imported, want %d", len(got), len(old))
			}
			for i, tr := range got {
				if tr.Iteration != ImportedIteration || tr.Status != Complete || tr.Meta["imported_from"] != "old" ||
					tr.Value != old[i].Value || !slices.Equal(tr.X, old[i].X) {
					t.Fatalf("imported trial %d: %+v, want the source's trial %+v marked as imported", i, tr, old[i])
				}
			}
			a, err := warm.Ask(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			b, err := ref.Ask(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if warm.lastModel == nil || warm.lastModel.N != len(old) || !slices.Equal(warm.lastModel.Params, ref.lastModel.Params) {
				t.Fatalf("first model %+v, want %+v fitted on the %d imported trials", warm.lastModel, ref.lastModel, len(old))
			}
			if acqName == "tes" {
				warmStartProposesXBar(t, db, old, a[0].U, b[0].U)
			} else {
				sameTrials(t, []Trial{{ID: a[0].ID, Iteration: 1, X: a[0].X, U: a[0].U, Status: Pending}},
					[]Trial{{ID: b[0].ID, Iteration: 1, X: b[0].X, U: b[0].U, Status: Pending}})
			}
			if q, more := warm.nextBatchLocked(); !more || q != 1 || a[0].Iteration != 1 {
				t.Fatalf("after the import and one iteration: next batch %d, more %v; want the budget's second iteration", q, more)
			}
		})
	}
}

// warmStartProposesXBar checks that the first proposal a of the study
// "new" in db, warm-started from the trials old, maximizes the posterior
// mean of its first model: its mean is above that at every imported point
// and at least that of a search for argmax μ started from the best of them
// (as Recommend's); and that it is not b, the proposal of a study given the
// same trials without a warm start.
func warmStartProposesXBar(t *testing.T, db *Storage, old []Trial, a, b []float64) {
	t.Helper()
	p, err := LoadPosterior(context.Background(), db, "new", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if p.Iteration != 1 || p.GP.N() != len(old) {
		t.Fatalf("first model: iteration %d with %d observations, want 1 with the %d imported", p.Iteration, p.GP.N(), len(old))
	}
	best, means := acq.BestMean(p.GP)
	start := mat.NewDense(1, len(a), append([]float64(nil), p.GP.X().RawRowView(best)...))
	_, top, err := acq.MaximizeMean(context.Background(), p.GP, start, acq.OptimizeSettings{}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := p.GP.MeanVar(a)
	if !(m > means[best]) || m < top-1e-6 {
		t.Fatalf("first proposal %v has posterior mean %v, want x̄: above the imported points' %v and at least argmax μ's %v", a, m, means[best], top)
	}
	if slices.Equal(a, b) {
		t.Fatalf("first proposal %v is that of a study without a warm start", a)
	}
}

// A warm-started study interrupted mid-run and reopened ends with exactly
// the trials of an uninterrupted one (the imported trials are stored), in
// batches of 2 and of 1 (where the default acquisition's x̄ schedule
// counts from the warm start: x̄ at iterations 1 and 5).
func TestWarmStartResumeExact(t *testing.T) {
	for _, c := range []struct{ batch, iters int }{{2, 4}, {1, 6}} {
		path := t.TempDir() + "/w.db"
		raw := openDB(t, path, true)
		sourceStudy(t, wrap(raw), hartmann6(), Options{Acquisition: "ei", Iters: 4, Init: 4, Seed: 3})
		o := Options{Batch: c.batch, Iters: c.iters, NoInit: true, Seed: 4, WarmStart: []string{"old"}, DB: wrap(raw), Grace: -1}
		o.Name = "whole"
		want, err := Optimize(context.Background(), hartmann6(), o)
		if err != nil {
			t.Fatal(err)
		}
		interruptStudy(t, hartmann6(), o, 3)
		raw.Close()
		sameTrials(t, want.Trials, reopenAndRun(t, path, Options{}, hartmann6()))
		if len(want.Trials) != 8+c.iters*c.batch {
			t.Fatalf("batch %d: %d trials, want the 8 imported and %d iterations × %d", c.batch, len(want.Trials), c.iters, c.batch)
		}
	}
}

// Parameters are matched by name and kind, categoricals by choice name;
// trials lacking a parameter or outside the new bounds are skipped; the
// prior mode opens the design with the source's best points and imports
// no observations; bad sources are refused.
func TestWarmStartMatchingAndPrior(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	src := sdk.Info{Name: "test/src", Params: []sdk.Param{
		{Name: "x", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "opt", Kind: sdk.Categorical, Choices: []string{"sgd", "adam", "rmsprop"}},
		{Name: "gone", Kind: sdk.Float, Low: 0, High: 1},
	}}
	obj := funcObjective{info: src, f: func(_ context.Context, x []float64) (float64, error) {
		return -math.Pow(x[0]-0.3, 2) + x[1] + x[2], nil
	}}
	old := sourceStudy(t, db, obj, Options{Acquisition: "random", Iters: 20, Init: 4, Seed: 1})
	// The new space: x narrowed to [0, 0.5], the choices reordered and one
	// of them gone.
	dst := sdk.Info{Name: "test/dst", Params: []sdk.Param{
		{Name: "opt", Kind: sdk.Categorical, Choices: []string{"adam", "sgd"}},
		{Name: "x", Kind: sdk.Float, Low: 0, High: 0.5},
	}}
	s, err := NewStudy(ctx, dst, Options{DB: db, Name: "new", NoInit: true, WarmStart: []string{"old"}, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	var want [][]float64
	for _, tr := range old {
		if tr.X[0] <= 0.5 && tr.X[1] != 2 {
			want = append(want, []float64{1 - tr.X[1], tr.X[0]})
		}
	}
	var got [][]float64
	for _, tr := range s.Trials() {
		got = append(got, tr.X)
	}
	if len(want) == 0 || len(want) == len(old) || !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("imported %v, want %v (of %d source trials)", got, want, len(old))
	}
	s.Close()

	p, err := NewStudy(ctx, src, Options{DB: db, Name: "prior", Init: 3, WarmStart: []string{"old"}, WarmStartMode: WarmPrior, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	best := slices.Clone(old)
	slices.SortStableFunc(best, func(a, b Trial) int { return -cmpFloat(a.Value, b.Value) })
	ts, err := p.Ask(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 || len(p.Trials()) != 3 {
		t.Fatalf("prior mode: %d design points and %d trials, want 3 and no imported trial", len(ts), len(p.Trials()))
	}
	for i, tr := range ts {
		if !slices.Equal(tr.X, best[i].X) {
			t.Fatalf("prior mode: design point %d %v, want the source's %d-th best %v", i, tr.X, i+1, best[i].X)
		}
	}
	p.Close()

	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{WarmStart: []string{"nope"}}, `no study "nope"`},
		{Options{WarmStart: []string{"old", "old"}}, "given twice"},
		{Options{WarmStart: []string{"old"}, WarmStartMode: "guess"}, "unknown warm-start mode"},
	} {
		c.o.DB, c.o.Name = db, "bad"
		if _, err := NewStudy(ctx, src, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.o.WarmStart, err, c.want)
		}
	}
	if _, err := NewStudy(ctx, sdk.Info{Name: "k", Params: []sdk.Param{{Name: "x", Kind: sdk.Int, Low: 0, High: 3}}},
		Options{DB: db, Name: "kind", WarmStart: []string{"old"}}); err == nil || !strings.Contains(err.Error(), "matched by name and kind") {
		t.Errorf("a parameter of another kind: err %v", err)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// A warm-started study run by workers spends its whole budget on new
// trials: the imported ones use up none of it.
func TestWarmStartWorkerBudget(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	old := sourceStudy(t, db, &branin{}, Options{Acquisition: "ei", Iters: 3, Init: 3, Seed: 3})
	info, _ := (&branin{}).Info(ctx)
	s, err := NewStudy(ctx, info, Options{DB: db, Name: "new", Acquisition: "qei", Batch: 2, Iters: 2, Init: 2, Seed: 4, WarmStart: []string{"old"}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	res, err := RunWorker(ctx, db, "new", &branin{}, WorkerOptions{Parallel: 2, Poll: time.Millisecond})
	if err != nil || !res.Done {
		t.Fatalf("worker: %+v %v", res, err)
	}
	row, _ := db.store().Study(ctx, "new")
	ts, err := loadTrials(ctx, db.store(), row.ID)
	if err != nil {
		t.Fatal(err)
	}
	imported, fresh := 0, 0
	for _, tr := range ts {
		if tr.Status != Complete {
			t.Fatalf("trial %+v", tr)
		}
		if tr.Iteration == ImportedIteration {
			imported++
		} else {
			fresh++
		}
	}
	if imported != len(old) || fresh != 2+2*2 {
		t.Fatalf("%d imported, %d new trials; want %d and 6", imported, fresh, len(old))
	}
}

// A warm start keeps the source's learning curves: every imported trial
// carries its intermediate values, and a study that stops trials itself
// (a pruner, as the source) imports the pruned ones too, as pruned with
// their last value and step, so its pruner compares its first trial with
// every imported curve. A study that stops nothing skips them (their
// values are where the source stopped them), and trials that reported a
// step past this objective's MaxStep are skipped.
func TestWarmStartPrunedTrials(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	src := pruningOptions()
	old := sourceStudy(t, db, curveObjective{steps: 9}, src)
	pruned := checkPruned(t, old, 9)
	if pruned == 0 {
		t.Fatal("the source study pruned nothing")
	}
	open := func(name string, o Options, obj sdk.Objective) []Trial {
		t.Helper()
		o.DB, o.Name, o.WarmStart = db, name, []string{"old"}
		info, err := obj.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewStudy(ctx, info, o)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return s.Trials()
	}
	got := open("with-pruner", src, curveObjective{steps: 9})
	if len(got) != len(old) {
		t.Fatalf("a study with a pruner imported %d trials, want all %d (%d pruned)", len(got), len(old), pruned)
	}
	for i, tr := range got {
		o := old[i]
		if tr.Status != o.Status || math.Float64bits(tr.Value) != math.Float64bits(o.Value) ||
			!slices.Equal(tr.Intermediates, o.Intermediates) || len(tr.Intermediates) == 0 {
			t.Fatalf("imported trial %d: %v %v %+v, want the source's %v %v %+v", i, tr.Status, tr.Value, tr.Intermediates, o.Status, o.Value, o.Intermediates)
		}
	}
	if h := pruneHistory(got, 1, false); len(h) != len(old) {
		t.Fatalf("the pruner's history at iteration 1 holds %d curves, want the %d imported", len(h), len(old))
	}
	plain := baseOptions(7)
	plain.Iters = 1
	got = open("without-pruner", plain, curveObjective{steps: 9})
	if len(got) != len(old)-pruned {
		t.Fatalf("a study without a pruner imported %d trials, want the %d complete ones", len(got), len(old)-pruned)
	}
	for _, tr := range got {
		if tr.Status != Complete || len(tr.Intermediates) != 9 {
			t.Fatalf("imported trial %d: %v with %d intermediate values, want complete with 9", tr.ID, tr.Status, len(tr.Intermediates))
		}
	}
	short := 0 // source trials that stopped by step 5
	for _, tr := range old {
		if tr.Intermediates[len(tr.Intermediates)-1].Step <= 5 {
			short++
		}
	}
	if short == 0 || short == len(old) {
		t.Fatalf("%d of %d source trials stopped by step 5: the case needs some of each", short, len(old))
	}
	if got = open("max-step-5", src, curveObjective{steps: 5}); len(got) != short {
		t.Fatalf("an objective of 5 steps imported %d trials, want the %d that stopped by step 5", len(got), short)
	}
}

// A warm start none of whose source trials fits the new space is refused:
// the study would start with neither the old trials nor an initial design.
func TestWarmStartNothingFits(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	sourceStudy(t, db, hartmann6(), Options{Acquisition: "random", Iters: 1, Init: 4, Seed: 3})
	info := sdk.Info{Name: "other", Params: []sdk.Param{{Name: "zz", Low: 0, High: 1}}}
	_, err := NewStudy(ctx, info, Options{DB: db, Name: "new", WarmStart: []string{"old"}, NoInit: true, Iters: 2})
	if err == nil || !strings.Contains(err.Error(), "no trial of old can be used here (5 skipped") {
		t.Fatalf("err %v, want the warm start refused, counting the 5 skipped trials", err)
	}
}

// Warm-starting from a study and from one that warm-started from it
// imports each evaluation once: the second's imported copies of the
// first's trials are skipped as repeats.
func TestWarmStartSkipsRepeats(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	obj := hartmann6()
	first := sourceStudy(t, db, obj, Options{Acquisition: "ei", Iters: 3, Init: 4, Seed: 3})
	o := Options{Acquisition: "ei", Iters: 2, NoInit: true, Seed: 5, DB: db, Name: "w", WarmStart: []string{"old"}, Grace: -1}
	mid, err := Optimize(ctx, obj, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Name, o.WarmStart, o.Seed = "both", []string{"old", "w"}, 6
	s, err := NewStudy(ctx, unitInfo(6), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	own := len(mid.Trials) - len(first)
	if got := s.importedTrials(); got != len(first)+own {
		t.Fatalf("imported %d trials, want %d of old and %d of w's own", got, len(first), own)
	}
}

// A study stored without its warm start's imports (they are one
// transaction, so a process stopped while importing leaves all of them or
// none; none here: the rows are deleted as a kill before that transaction
// leaves them) imports them when it is reopened, and goes on as the study
// that was never stopped.
func TestWarmStartImportedOnReopen(t *testing.T) {
	path := t.TempDir() + "/w.db"
	raw := openDB(t, path, true)
	sourceStudy(t, wrap(raw), hartmann6(), Options{Acquisition: "ei", Iters: 4, Init: 4, Seed: 3})
	o := Options{Batch: 2, Iters: 3, NoInit: true, Seed: 4, WarmStart: []string{"old"}, DB: wrap(raw), Grace: -1}
	o.Name = "whole"
	want, err := Optimize(context.Background(), hartmann6(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Name = "st"
	s, err := NewStudy(context.Background(), unitInfo(6), o)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw.Close()
	unstoreImports(t, path, "st", "trials", "iterations")
	got := reopenAndRun(t, path, Options{}, hartmann6())
	sameTrials(t, want.Trials, got)
	if got[0].Iteration != ImportedIteration || got[0].Meta["imported_from"] != "old" {
		t.Fatalf("first trial %+v, want an import from old", got[0])
	}
}

// A worker study whose creator stopped before storing the warm start's
// imports gets them from its first proposer, and the workers that joined
// before still evaluate the whole budget: the imports use none of it (the
// workers had counted no import and stopped that many evaluations short).
func TestWorkerStudyImportsMissing(t *testing.T) {
	path := t.TempDir() + "/w.db"
	raw := openDB(t, path, true)
	old := sourceStudy(t, wrap(raw), hartmann6(), Options{Acquisition: "random", Iters: 4, Init: 4, Seed: 3})
	o := Options{Acquisition: "random", Batch: 2, Iters: 3, NoInit: true, Seed: 4, WarmStart: []string{"old"}, DB: wrap(raw), Name: "st"}
	s, err := NewStudy(context.Background(), unitInfo(6), o)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw.Close()
	unstoreImports(t, path, "st", "trials")
	raw = openDB(t, path, false)
	defer raw.Close()
	if _, err := RunWorker(context.Background(), wrap(raw), "st", hartmann6(), WorkerOptions{Parallel: 1, Poll: 2 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	trials, err := wrap(raw).Trials(context.Background(), "st")
	if err != nil {
		t.Fatal(err)
	}
	imported, own := 0, 0
	for _, tr := range trials {
		if tr.Iteration == ImportedIteration {
			imported++
		} else if tr.Status == Complete {
			own++
		}
	}
	if imported != len(old) || own != 6 {
		t.Fatalf("%d imports and %d evaluations, want %d and 6", imported, own, len(old))
	}
}

// Imports count toward MaxTrials with the budget (the model is fitted on
// them too), and a warm start refused for it stores nothing: the study
// name stays free (a refusal after the study row had blocked it for good).
func TestWarmStartImportsCountTowardMaxTrials(t *testing.T) {
	path := t.TempDir() + "/w.db"
	raw := openDB(t, path, true)
	defer raw.Close()
	db := wrap(raw)
	sourceStudy(t, db, hartmann6(), Options{Acquisition: "random", Iters: 4, Init: 4, Seed: 3})
	o := Options{Acquisition: "random", Init: 2, Iters: MaxTrials - 9, WarmStart: []string{"old"}, DB: db, Name: "w", Grace: -1}
	_, err := NewStudy(context.Background(), unitInfo(6), o)
	if err == nil || !strings.Contains(err.Error(), "8 imported trials and a budget of 4993 evaluations make 5001 trials, more than 5000 (MaxTrials)") {
		t.Fatalf("err = %v, want the import budget refused", err)
	}
	if _, err := raw.Study(context.Background(), "w"); err == nil {
		t.Fatal("the refused study was stored")
	}
	o.Iters = MaxTrials - 10 // 8 + 2 + 4990 = 5000
	s, err := NewStudy(context.Background(), unitInfo(6), o)
	if err != nil {
		t.Fatalf("a budget that fits with the imports: %v", err)
	}
	s.Close()
}

// unstoreImports deletes study's rows of tables from the closed database
// at path, as a process stopped between storing a study and its warm
// start's imports leaves it.
func unstoreImports(t *testing.T, path, study string, tables ...string) {
	t.Helper()
	sq, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	for _, tb := range tables {
		if _, err := sq.Exec(`DELETE FROM `+tb+` WHERE study_id=(SELECT id FROM studies WHERE name=?)`, study); err != nil {
			t.Fatal(err)
		}
	}
}
