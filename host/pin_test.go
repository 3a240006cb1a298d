package host

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// pinSpace mixes every kind; the pins below include a LogFloat and a Float
// whose unit-cube round trip is not exact, an Int and a Categorical.
var pinSpace = sdk.Info{Name: "test/pins", Params: []sdk.Param{
	{Name: "lr", Kind: sdk.LogFloat, Low: 1e-4, High: 1},
	{Name: "layers", Kind: sdk.Int, Low: 1, High: 5},
	{Name: "opt", Kind: sdk.Categorical, Choices: []string{"sgd", "adam", "rmsprop"}},
	{Name: "x", Kind: sdk.Float, Low: 0, High: 1},
	{Name: "w", Kind: sdk.Float, Low: -3, High: 7},
}}

var pins = map[string]float64{"lr": 0.003, "opt": 2, "w": 1.1}

// pinObjective is smooth in the free coordinates and records every point
// it is asked to evaluate.
type pinObjective struct {
	mu   sync.Mutex
	seen [][]float64
}

func (o *pinObjective) Info(context.Context) (sdk.Info, error) { return pinSpace, nil }
func (o *pinObjective) Evaluate(_ context.Context, x []float64) (float64, error) {
	o.mu.Lock()
	o.seen = append(o.seen, append([]float64(nil), x...))
	o.mu.Unlock()
	v := -math.Pow(math.Log10(x[0])+2.5, 2) - 0.3*math.Pow(x[1]-3, 2) - math.Pow(x[3]-0.7, 2) - 0.1*math.Pow(x[4]-2, 2)
	if x[2] == 1 {
		v += 0.5
	}
	return v, nil
}

// checkPinned fails unless every point holds the pinned values exactly.
func checkPinned(t *testing.T, pts [][]float64, fixed map[string]float64) {
	t.Helper()
	for _, x := range pts {
		for name, v := range fixed {
			i := pinSpaceIndex(name)
			if math.Float64bits(x[i]) != math.Float64bits(v) {
				t.Fatalf("point %v: %s = %v, pinned at %v", x, name, x[i], v)
			}
		}
	}
}

func pinSpaceIndex(name string) int {
	for i, p := range pinSpace.Params {
		if p.Name == name {
			return i
		}
	}
	panic(name)
}

// Every point a study with Options.Fixed proposes — the initial design,
// each acquisition's batches — holds the pinned values exactly, in the
// trials and in what the objective receives, and the free coordinates
// still vary.
func TestFixedInEveryPoint(t *testing.T) {
	for _, name := range []string{"tes", "ei", "qei", "ts", "random"} {
		t.Run(name, func(t *testing.T) {
			obj := &pinObjective{}
			res, err := Optimize(context.Background(), obj, Options{Acquisition: name, Batch: 2, Iters: 3, Init: 3, Seed: 5, Fixed: pins, Grace: -1})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Trials) != 9 || len(obj.seen) != 9 {
				t.Fatalf("%d trials, %d evaluations, want 9", len(res.Trials), len(obj.seen))
			}
			var xs [][]float64
			free := map[float64]bool{}
			for _, tr := range res.Trials {
				xs = append(xs, tr.X)
				free[tr.X[3]] = true
			}
			checkPinned(t, xs, pins)
			checkPinned(t, obj.seen, pins)
			if len(free) < 5 {
				t.Fatalf("free coordinate x took only %d values", len(free))
			}
		})
	}
}

// The pins are stored with the study: a study interrupted mid-run and
// reopened without them proposes exactly the trials of an uninterrupted
// run, every one pinned.
func TestFixedResumeExact(t *testing.T) {
	ctx := context.Background()
	opts := Options{Batch: 2, Iters: 4, Init: 3, Seed: 9, Fixed: pins, Grace: -1}
	want, err := Optimize(ctx, &pinObjective{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	path := interruptedStudy(t, &pinObjective{}, opts, 6)
	db := openDB(t, path, false)
	defer db.Close()
	s, err := OpenStudy(ctx, wrap(db), "st", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(ctx, &pinObjective{}); err != nil {
		t.Fatal(err)
	}
	sameTrials(t, want.Trials, s.Trials())
	var xs [][]float64
	for _, tr := range s.Trials() {
		xs = append(xs, tr.X)
	}
	checkPinned(t, xs, pins)
}

// Ask's Fix option pins one call's points on top of the study's pins, and
// the model still fits every completed trial, pinned or not.
func TestAskFixUsesAllTrials(t *testing.T) {
	ctx := context.Background()
	s, err := NewStudy(ctx, pinSpace, Options{Init: 3, Seed: 2, Fixed: map[string]float64{"w": 1.1}})
	if err != nil {
		t.Fatal(err)
	}
	obj := &pinObjective{}
	tell := func(ts []Trial) {
		for _, tr := range ts {
			v, _ := obj.Evaluate(ctx, tr.X)
			if err := s.Tell(ctx, tr.ID, v, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	ts, err := s.Ask(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	tell(ts)
	// Points elsewhere in the space, evaluated outside the study.
	for _, x := range [][]float64{{0.1, 2, 0, 0.2, 5}, {0.01, 4, 1, 0.9, -2}} {
		v, _ := obj.Evaluate(ctx, x)
		if _, err := s.Attach(ctx, x, v); err != nil {
			t.Fatal(err)
		}
	}
	one := map[string]float64{"layers": 4, "opt": 0}
	for range 3 {
		ts, err := s.Ask(ctx, 2, Fix(one))
		if err != nil {
			t.Fatal(err)
		}
		var xs [][]float64
		for _, tr := range ts {
			xs = append(xs, tr.X)
		}
		checkPinned(t, xs, map[string]float64{"layers": 4, "opt": 0, "w": 1.1})
		tell(ts)
	}
	if n := s.lastModel.N; n != len(s.Trials())-2 {
		t.Fatalf("the last model fitted %d trials, want every completed one, %d", n, len(s.Trials())-2)
	}
	for _, bad := range []map[string]float64{{"nope": 1}, {"layers": 2.5}, {"w": 8}, {"opt": 3}} {
		if _, err := s.Ask(ctx, 1, Fix(bad)); err == nil || !strings.Contains(err.Error(), "fixed parameter") {
			t.Errorf("Fix(%v): err %v, want a refusal naming the fixed parameter", bad, err)
		}
	}
}

// Pins given as text (run --fix) take a categorical by its choice's name
// and numbers in native units; anything else is refused with the flag.
func TestFixedFromText(t *testing.T) {
	got, err := fixedFromText(pinSpace.Params, map[string]string{"opt": "rmsprop", "lr": "0.003", "w": "1.1"}, nil)
	if err != nil || len(got) != 3 || got["opt"] != 2 || got["lr"] != 0.003 || got["w"] != 1.1 {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []map[string]string{{"opt": "nadam"}, {"opt": "2"}, {"x": "inf"}, {"zz": "1"}} {
		if _, err := fixedFromText(pinSpace.Params, bad, nil); err == nil || !strings.HasPrefix(err.Error(), "bad --fix") {
			t.Errorf("%v: err %v, want a refusal of the flag", bad, err)
		}
	}
}

// A pin that the other pins make inactive everywhere is refused, naming
// the ancestor on its chain of conditions that does so; pins along an
// active chain, or of a conditional parameter whose parent is free, are
// accepted.
func TestFixedInactiveRefused(t *testing.T) {
	space, err := NewSpace([]sdk.Param{
		{Name: "opt", Kind: sdk.Categorical, Choices: []string{"sgd", "adam"}},
		{Name: "sched", Kind: sdk.Categorical, Choices: []string{"const", "cos"}, ActiveIf: &sdk.Condition{Parent: "opt", Values: []string{"sgd"}}},
		{Name: "warm", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: &sdk.Condition{Parent: "sched", Values: []string{"cos"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fixed map[string]float64
		want  string // "" when accepted
	}{
		{map[string]float64{"opt": 1, "sched": 1}, "fixed parameter sched: no proposal would use it, since opt is fixed to adam"},
		{map[string]float64{"sched": 0, "warm": 0.1}, "fixed parameter warm: no proposal would use it, since sched is fixed to const"},
		{map[string]float64{"opt": 1, "warm": 0.1}, "fixed parameter warm: no proposal would use it, since opt is fixed to adam"},
		{map[string]float64{"opt": 0, "sched": 1, "warm": 0.1}, ""},
		{map[string]float64{"warm": 0.1}, ""},
		{map[string]float64{"opt": 0, "warm": 0.1}, ""},
	} {
		_, err := space.pins(c.fixed)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("pins %v: %v, want %q", c.fixed, err, c.want)
		}
	}
}

// A study whose every parameter is fixed is refused: every proposal would
// be the same point. One left free is fine.
func TestEveryParameterFixedRefused(t *testing.T) {
	info := unitInfo(2)
	_, err := NewStudy(context.Background(), info, Options{Acquisition: "random", Fixed: map[string]float64{"x0": 0.5, "x1": 0.5}})
	if err == nil || !strings.Contains(err.Error(), "every parameter is fixed") {
		t.Fatalf("all fixed: %v, want refused", err)
	}
	if _, err := NewStudy(context.Background(), info, Options{Acquisition: "random", Fixed: map[string]float64{"x0": 0.5}}); err != nil {
		t.Fatalf("one free: %v", err)
	}
}

// A study with fixed parameters recommends on its pinned slice, also when
// a warm start imported better trials off it (its evaluated x̄ and its
// refined x̄ alike), with and without a fidelity input.
func TestRecommendOnPinnedSlice(t *testing.T) {
	ctx := context.Background()
	for _, recommend := range []string{RecommendEvaluated, RecommendRefine} {
		db := offSliceSource(t)
		o := Options{Acquisition: "ei", Iters: 2, Init: 2, Seed: 8, DB: db, Name: "new", WarmStart: []string{"old"},
			Fixed: map[string]float64{"x0": 0.2}, Recommend: recommend, Grace: -1}
		res, err := Optimize(ctx, funcObjective{unitInfo(2), offSliceBest}, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Best == nil || res.Best.X[0] != 0.2 {
			t.Fatalf("%s: recommended %+v, off the slice x0 = 0.2", recommend, res.Best)
		}
	}
}

// Pinning a categorical parent keeps the drawn values of the children its
// branch activates: the initial design stays a Latin hypercube on them
// instead of putting every point drawn on another branch at the child's
// default (0.5).
func TestPinnedParentDesignSpreadsChildren(t *testing.T) {
	info := sdk.Info{Name: "cond", Params: []sdk.Param{
		{Name: "branch", Kind: sdk.Categorical, Choices: []string{"a", "b", "c"}},
		{Name: "x1", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: &sdk.Condition{Parent: "branch", Values: []string{"b"}}},
		{Name: "z", Kind: sdk.Float, Low: 0, High: 1},
	}}
	o := baseOptions(4)
	o.Init, o.Fixed = 9, map[string]float64{"branch": 1}
	s, err := NewStudy(context.Background(), info, o)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.Ask(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[float64]bool{}
	for _, tr := range ts {
		if tr.X[0] != 1 || math.IsNaN(tr.X[1]) || seen[tr.X[1]] {
			t.Fatalf("design trial %d: %v (x1 must be active and distinct: %v)", tr.ID, tr.X, seen)
		}
		seen[tr.X[1]] = true
	}
}

// With no complete trial on the pinned slice (the study's own all failed
// or were stopped), x̄ is the posterior mean's maximizer on the slice,
// unevaluated, not an imported trial off it.
func TestRecommendOnSliceWithoutTrialThere(t *testing.T) {
	ctx := context.Background()
	for _, recommend := range []string{RecommendEvaluated, RecommendRefine} {
		db := offSliceSource(t)
		s, err := NewStudy(ctx, unitInfo(2), Options{Acquisition: "ei", Iters: 2, Init: 2, Seed: 8, DB: db, Name: "new",
			WarmStart: []string{"old"}, Fixed: map[string]float64{"x0": 0.2}, Recommend: recommend})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := s.Ask(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts {
			if err := s.Tell(ctx, tr.ID, 0, errors.New("crashed")); err != nil {
				t.Fatal(err)
			}
		}
		rec, err := s.Recommend(ctx)
		s.Close()
		if err != nil || rec.X[0] != 0.2 || rec.TrialID != -1 {
			t.Fatalf("%s: recommended %+v, %v; want an unevaluated point on x0 = 0.2", recommend, rec, err)
		}
	}
}

// offSliceBest peaks at x0 = 0.9, far from the slice x0 = 0.2 the tests
// pin: every trial near the peak beats the slice.
func offSliceBest(_ context.Context, x []float64) (float64, error) {
	return -10*(x[0]-0.9)*(x[0]-0.9) - (x[1]-0.5)*(x[1]-0.5), nil
}

// offSliceSource is a memory database holding study "old", run on
// offSliceBest, to warm-start from.
func offSliceSource(t *testing.T) *Storage {
	db := MemoryStorage()
	sourceStudy(t, db, funcObjective{unitInfo(2), offSliceBest}, Options{Acquisition: "ei", Iters: 6, Init: 4, Seed: 3})
	return db
}
