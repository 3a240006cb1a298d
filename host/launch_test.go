package host

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// configCounter counts the Configure calls its objective gets.
type configCounter struct {
	funcObjective
	n *atomic.Int32
}

func (c configCounter) Configure(context.Context, map[string]string) error {
	c.n.Add(1)
	return nil
}

func newConfigCounter(info sdk.Info) configCounter {
	return configCounter{funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) {
		return -x[0] * x[0], nil
	}}, new(atomic.Int32)}
}

// Start sends the objective its run parameters once, whether this process
// runs the study alone or as a worker of a shared one.
func TestStartConfiguresOnce(t *testing.T) {
	for _, shared := range []bool{false, true} {
		dir := t.TempDir()
		obj := newConfigCounter(unitInfo(1))
		var db *store.DB
		o, err := Start(context.Background(), Launch{
			Options:   Options{Name: "s", Acquisition: "random", Iters: 2, Init: 2},
			Objective: obj,
			OpenDB: func(context.Context) (*Storage, error) {
				var err error
				db, err = store.Open(filepath.Join(dir, "s.db"), store.Options{Create: true})
				return wrap(db), err
			},
			Shared: shared,
		})
		if err != nil {
			t.Fatalf("shared %v: %v", shared, err)
		}
		if got := obj.n.Load(); got != 1 {
			t.Errorf("shared %v: Configure sent %d times, want once", shared, got)
		}
		if shared && (o.Worker == nil || o.Worker.Evaluated != 4) {
			t.Errorf("shared: worker result %+v, want 4 evaluations", o.Worker)
		}
		if !shared && (o.Result == nil || o.Result.Evaluations != 4) {
			t.Errorf("alone: result %+v, want 4 evaluations", o.Result)
		}
		db.Close()
	}
}

// A study Start refuses creates no database: every input is checked
// before OpenDB is called.
func TestStartRefusesBeforeOpening(t *testing.T) {
	opened := false
	_, err := Start(context.Background(), Launch{
		Options:   Options{Acquisition: "random", Batch: -1},
		Objective: newConfigCounter(unitInfo(1)),
		OpenDB: func(context.Context) (*Storage, error) {
			opened = true
			return nil, errors.New("opened")
		},
	})
	var in *InputError
	if !errors.As(err, &in) || opened {
		t.Fatalf("err %v (opened %v), want an *InputError before opening", err, opened)
	}
}

// InitFromObjective takes the design the objective declares, else
// DefaultObjectiveInit, capped by an integer space; an explicit Init or
// NoInit wins.
func TestInitFromObjective(t *testing.T) {
	grid := sdk.Info{Name: "grid", Params: []sdk.Param{{Name: "a", Kind: sdk.Int, Low: 0, High: 2}, {Name: "b", Kind: sdk.Int, Low: 0, High: 1}}}
	declared := unitInfo(2)
	declared.InitialDesign = 2
	for _, c := range []struct {
		name string
		info sdk.Info
		o    Options
		want int
	}{
		{"declared", declared, Options{InitFromObjective: true}, 2},
		{"undeclared", unitInfo(2), Options{InitFromObjective: true}, DefaultObjectiveInit},
		{"integer space", grid, Options{InitFromObjective: true}, 6},
		{"explicit", declared, Options{InitFromObjective: true, Init: 5}, 5},
		{"none", declared, Options{InitFromObjective: true, NoInit: true}, 0},
		{"library default", unitInfo(2), Options{}, DefaultInit},
	} {
		s, err := NewStudy(context.Background(), c.info, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := s.Settings().Init; got != c.want {
			t.Errorf("%s: Init %d, want %d", c.name, got, c.want)
		}
	}
}

// Resume refuses a study another process holds, and Join one a single
// process ran, before loading the objective (no plugin starts).
func TestResumeJoinRefuseBeforeLoading(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	obj := newConfigCounter(unitInfo(1))
	held, err := NewStudy(ctx, unitInfo(1), Options{DB: wrap(db), Name: "held", Acquisition: "random", Init: 2, Iters: 1})
	if err != nil {
		t.Fatal(err)
	}
	loaded := false
	load := func(context.Context, Options, sdk.Info) (Loaded, error) {
		loaded = true
		return Loaded{Objective: obj}, nil
	}
	_, err = Resume(ctx, wrap(db), "held", ResumeOptions{Load: load})
	var lh *LeaseHeldError
	var in *InputError
	if !errors.As(err, &in) || !errors.As(err, &lh) || loaded {
		t.Fatalf("resume of a held study: %v (loaded %v), want an *InputError wrapping *LeaseHeldError before loading", err, loaded)
	}
	if _, err := held.Run(ctx, obj); err != nil {
		t.Fatal(err)
	}
	held.Close()
	_, err = Join(ctx, wrap(db), "held", JoinOptions{Load: load})
	var alone *RunAloneError
	if !errors.As(err, &alone) || loaded {
		t.Fatalf("join of a single-process study: %v (loaded %v), want *RunAloneError before loading", err, loaded)
	}
	o, err := Resume(ctx, wrap(db), "held", ResumeOptions{Load: load, Summarize: true})
	if err != nil || !o.Complete || o.Result == nil || o.Result.Evaluations != 3 {
		t.Fatalf("resume of a complete study: %+v, %v; want Complete with its summary of 3 evaluations", o, err)
	}
}

// Start on a shared database joins a study of the same name only when it
// is the study Start would have made: the same objective, seed and
// settings (its evaluation slots may differ). Otherwise its objective and
// options would be ignored, so it refuses, naming what differs.
func TestStartJoinsOnlyTheSameStudy(t *testing.T) {
	dir := t.TempDir()
	launch := func(o Options, info sdk.Info) (*Outcome, error) {
		o.Name, o.Acquisition = "s", "random"
		return Start(context.Background(), Launch{Options: o, Objective: newConfigCounter(info), Shared: true,
			Load: func(context.Context, Options, sdk.Info) (Loaded, error) {
				return Loaded{Objective: newConfigCounter(info)}, nil
			},
			OpenDB: func(context.Context) (*Storage, error) {
				db, err := store.Open(filepath.Join(dir, "s.db"), store.Options{Create: true})
				t.Cleanup(func() { db.Close() })
				return wrap(db), err
			}})
	}
	base := Options{Iters: 2, Init: 2, Seed: 3}
	if _, err := launch(base, unitInfo(1)); err != nil {
		t.Fatal(err)
	}
	same := base
	same.Parallel = 3
	if _, err := launch(same, unitInfo(1)); err != nil {
		t.Fatalf("the same study with other slots: %v, want it joined", err)
	}
	other := unitInfo(1)
	other.Name = "other"
	moreIters, otherSeed := base, base
	moreIters.Iters, otherSeed.Seed = 5, 4
	for _, c := range []struct {
		o    Options
		info sdk.Info
		want string
	}{
		{moreIters, unitInfo(1), "iters 2 there, 5 here"},
		{otherSeed, unitInfo(1), "seed 3 there, 4 here"},
		{base, other, "objective " + unitInfo(1).Name + " there, other here"},
		{base, unitInfo(2), "the objective's parameters or outputs"},
	} {
		_, err := launch(c.o, c.info)
		var in *InputError
		if !errors.As(err, &in) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "tesbo-host worker --study s") {
			t.Errorf("err %v, want an *InputError saying %q and how to join", err, c.want)
		}
	}
}

// silentObjective says it reports no intermediate values.
type silentObjective struct{ configCounter }

func (silentObjective) SupportsReports() bool { return false }

// A study with a pruner warns when its objective says it reports no
// intermediate values: the pruner will stop nothing.
func TestStartWarnsPrunerWithoutReports(t *testing.T) {
	var buf bytes.Buffer
	info := unitInfo(1)
	info.MaxStep = 5
	_, err := Start(context.Background(), Launch{
		Options: Options{Name: "s", Acquisition: "random", Iters: 1, Init: 2, Logger: zerolog.New(&buf),
			Pruning: Pruning{Rule: PrunerMedian, Model: PruneModelLast}},
		Objective: silentObjective{newConfigCounter(info)},
		OpenDB:    func(context.Context) (*Storage, error) { return MemoryStorage(), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "the pruner will stop no evaluation") {
		t.Fatalf("log lacks the warning:\n%s", buf.String())
	}
}

// Multi-fidelity with an objective that says it reports nothing is
// refused: its trials would run in full whatever their step.
func TestStartRefusesMultiFidelityWithoutReports(t *testing.T) {
	info := unitInfo(1)
	info.MaxStep = 5
	_, err := Start(context.Background(), Launch{
		Options:   Options{Name: "s", Iters: 1, Init: 2, MultiFidelity: MultiFidelity{Enabled: true}},
		Objective: silentObjective{newConfigCounter(info)},
		OpenDB:    func(context.Context) (*Storage, error) { return MemoryStorage(), nil },
	})
	var in *InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "multi-fidelity needs to stop a trial at its step") {
		t.Fatalf("err %v, want an *InputError", err)
	}
}

// refusingConfig refuses every Configure (its data went missing).
type refusingConfig struct{ funcObjective }

func (refusingConfig) Configure(context.Context, map[string]string) error {
	return errors.New("data directory /gone: no such file")
}

// Resuming a study whose objective now refuses the stored parameters is
// an *InputError, as making it would have been (exit 2 in the CLI).
func TestResumeConfigureRefusalIsInput(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	o := Options{DB: db, Name: "s", Acquisition: "random", Iters: 2, Init: 2, Grace: -1}
	if _, err := Optimize(ctx, newConfigCounter(unitInfo(1)), o); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStudy(ctx, db, "s", Options{Iters: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Run(ctx, refusingConfig{newConfigCounter(unitInfo(1)).funcObjective})
	var in *InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "/gone") {
		t.Fatalf("err %v, want an *InputError", err)
	}
}
