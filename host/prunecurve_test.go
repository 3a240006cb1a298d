package host

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
)

// stateRecorder proposes uniform points (batch q, as many columns as the
// GP has inputs) and records what each call was given.
type stateRecorder struct {
	mu     sync.Mutex
	X      []*mat.Dense
	y      [][]float64
	pinned [][]float64
	best   []float64
	evals  []int
}

func (p *stateRecorder) Propose(ctx context.Context, s *acq.State, q int) (*mat.Dense, error) {
	p.mu.Lock()
	p.X = append(p.X, mat.DenseCopyOf(s.GP.X()))
	p.y = append(p.y, append([]float64(nil), s.GP.Y()...))
	p.pinned = append(p.pinned, append([]float64(nil), s.Pinned...))
	p.best, p.evals = append(p.best, s.Best), append(p.evals, s.Evaluated)
	p.mu.Unlock()
	return randomProposer{}.Propose(ctx, s, q)
}

func curveOptions(p acq.Proposer) Options {
	o := pruningOptions()
	o.Proposer = p
	o.Pruning.Model = PruneModelCurve
	return o
}

// With the curve model the GP is over (x, t): it sees every finished
// trial's thinned reports at t = log step / log MaxStep — a pruned trial at the
// steps it reached, a complete one also at t = 1 — and the acquisition is
// asked for points on the slice t = 1, with Best and Evaluated those of
// full training. The trials are the pruner's as without the model: no
// fidelity step is stored, and the recommendation is a complete trial.
func TestPruneCurveModel(t *testing.T) {
	obj := curveObjective{steps: 9}
	p := &stateRecorder{}
	res, err := Optimize(context.Background(), obj, curveOptions(p))
	if err != nil {
		t.Fatal(err)
	}
	if pruned := checkPruned(t, res.Trials, obj.steps); pruned == 0 {
		t.Fatal("nothing pruned")
	}
	for _, tr := range res.Trials {
		if _, ok := tr.Meta[fidelityStepKey]; ok {
			t.Fatalf("trial %d holds a fidelity step: %v", tr.ID, tr.Meta)
		}
	}
	if res.Best == nil || res.Trials[res.Best.TrialID].Status != Complete {
		t.Fatalf("recommended %+v, not a complete trial", res.Best)
	}
	// By the posterior mean at full training (t = 1), which on these
	// noise-free curves is about the trial's value, and picks about the
	// best complete value.
	bestValue := math.Inf(-1)
	for _, tr := range res.Trials {
		if tr.Status == Complete {
			bestValue = math.Max(bestValue, tr.Value)
		}
	}
	if v := *res.Best.Value; math.IsNaN(res.Best.Mean) || math.Abs(res.Best.Mean-v) > 0.05 || v < bestValue-0.05 {
		t.Fatalf("recommended trial %d: mean %v, value %v, best complete value %v", res.Best.TrialID, res.Best.Mean, v, bestValue)
	}
	if len(p.X) != 10 {
		t.Fatalf("%d acquisition calls, want 10", len(p.X))
	}
	last := len(p.X) - 1
	want := (&fidelity{maxStep: obj.steps, pruned: true}).dataset(res.Trials[:len(res.Trials)-1], 2, false)
	if !mat.Equal(p.X[last], want.X) {
		t.Fatalf("the last GP's inputs are not the (x, t) rows of the trials before it")
	}
	finished := 0
	for _, tr := range res.Trials[:len(res.Trials)-1] {
		if tr.Status.modelled() {
			finished++
		}
	}
	for i := range want.n() {
		if step := math.Exp(want.X.At(i, 2) * math.Log(9)); math.Abs(step-math.Round(step)) > 1e-9 || step < 1-1e-9 || step > 9+1e-9 {
			t.Fatalf("row %d at t = %v: not log step / log 9 of a step", i, want.X.At(i, 2))
		}
	}
	for i, pin := range p.pinned {
		if len(pin) != 3 || !math.IsNaN(pin[0]) || !math.IsNaN(pin[1]) || pin[2] != 1 {
			t.Fatalf("call %d: pins %v, want x free and t = 1", i, pin)
		}
	}
	if p.evals[last] != finished {
		t.Fatalf("Evaluated %d, want the %d finished trials (not the GP's %d rows)", p.evals[last], finished, want.n())
	}
	// Best is the largest standardized value at t = 1, the complete trials'.
	b := math.Inf(-1)
	for i, y := range p.y[last] {
		if p.X[last].At(i, 2) == 1 {
			b = math.Max(b, y)
		}
	}
	if p.best[last] != b {
		t.Fatalf("Best %v, want %v (the best at t = 1)", p.best[last], b)
	}
}

// The default acquisition runs a pruned study with the curve model from
// its own proposals, one point at a time and in batches of 4 (evaluated
// in parallel, pruned as they report), and the study resumes bitwise.
func TestPruneCurveModelTESResume(t *testing.T) {
	ctx := context.Background()
	obj := curveObjective{steps: 9}
	for _, q := range []int{1, 4} {
		var logs strings.Builder
		opts := func() Options {
			return Options{Acquisition: "tes", Batch: q, Parallel: q, Iters: 12 / q, Init: 4, Seed: 5, Grace: -1, Logger: zerolog.New(&logs),
				Pruning: Pruning{Rule: PrunerASHA, MinStep: 1, Eta: 3, Model: PruneModelCurve}}
		}
		want, err := Optimize(ctx, obj, opts())
		if err != nil {
			t.Fatal(err)
		}
		if checkPruned(t, want.Trials, obj.steps) == 0 {
			t.Fatalf("q = %d: nothing pruned", q)
		}
		if strings.Contains(logs.String(), "space-filling") {
			t.Fatalf("q = %d: the study fell back to space-filling points:\n%s", q, logs.String())
		}
		got := reopenAndRun(t, interruptedStudy(t, obj, opts(), 9), Options{}, obj)
		sameTrials(t, want.Trials, got)
	}
}

// The curve model is refused where it cannot work, with the reason.
func TestPruneCurveModelRefused(t *testing.T) {
	ctx := context.Background()
	obj := curveObjective{steps: 9}
	info, _ := obj.Info(ctx)
	for _, c := range []struct {
		i    func() Options
		want string
	}{
		{i: func() Options { o := baseOptions(1); o.Pruning = Pruning{Model: PruneModelCurve}; return o }, want: "needs a pruner"},
		{i: func() Options { o := baseOptions(1); o.Pruning = Pruning{Rule: PrunerMedian, Model: "nope"}; return o }, want: "unknown pruner model"},
		{i: func() Options { o := curveOptions(randomProposer{}); o.Model = ModelLocal; return o }, want: "local model"},
	} {
		if _, err := NewStudy(ctx, info, c.i()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.i().Pruning, err, c.want)
		}
	}
	// No last step: the median rule needs none, the curve model does.
	o := baseOptions(1)
	o.Pruning = Pruning{Rule: PrunerMedian, Model: PruneModelCurve}
	if _, err := NewStudy(ctx, unitInfo(2), o); err == nil || !strings.Contains(err.Error(), "MaxStep") {
		t.Errorf("a curve model without a last step: %v", err)
	}
	// Workers.
	db := MemoryStorage()
	o = Options{DB: db, Name: "w", Acquisition: "random", Batch: 2, Iters: 2, Init: 2, Seed: 3,
		Pruning: Pruning{Rule: PrunerMedian, Model: PruneModelCurve}}
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := RunWorker(ctx, db, "w", obj, WorkerOptions{Parallel: 1}); err == nil || !strings.Contains(err.Error(), "one process") {
		t.Fatalf("a worker on a curve-model study: %v", err)
	}
}

// xFeasible reads a probability learnt on x at (x, t): the value and the
// gradient in x are the wrapped one's, the gradient in t is 0.
func TestXFeasible(t *testing.T) {
	if xFeasible(nil) != nil {
		t.Fatal("xFeasible(nil) is not nil")
	}
	f := xFeasible(quadFeasible{})
	u := []float64{0.2, 0.7, 0.4}
	g := []float64{9, 9, 9}
	want := quadFeasible{}.LogProb(u[:2], nil)
	if v := f.LogProb(u, g); v != want || f.LogProb(u, nil) != want {
		t.Fatalf("LogProb %v, want %v", v, want)
	}
	if g[0] != -0.4 || g[1] != -1.4 || g[2] != 0 {
		t.Fatalf("gradient %v, want [-0.4 -1.4 0]", g)
	}
}

// quadFeasible is log p = −‖x‖², of any length.
type quadFeasible struct{}

func (quadFeasible) LogProb(x, grad []float64) float64 {
	var s float64
	for i, v := range x {
		s -= v * v
		if grad != nil {
			grad[i] = -2 * v
		}
	}
	return s
}

// failCurveObjective is curveObjective failing where x0 < 0.2.
type failCurveObjective struct{ curveObjective }

func (o failCurveObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	if x[0] < 0.2 {
		return 0, errors.New("bad region")
	}
	return o.curveObjective.Evaluate(ctx, x)
}

// Studies over (x, t) whose evaluations fail in a region — multi-fidelity
// and the curve model — learn where from x alone and run the default
// acquisition from its own proposals.
func TestStepModelsWithFailures(t *testing.T) {
	for name, o := range map[string]Options{
		"multi-fidelity": {MultiFidelity: MultiFidelity{Enabled: true}},
		"curve":          {Pruning: Pruning{Rule: PrunerMedian, Model: PruneModelCurve}},
	} {
		t.Run(name, func(t *testing.T) {
			var logs strings.Builder
			o.Acquisition, o.Batch, o.Iters, o.Init, o.Seed, o.Grace, o.Logger = "tes", 1, 8, 5, 4, -1, zerolog.New(&logs)
			res, err := Optimize(context.Background(), failCurveObjective{curveObjective{steps: 9}}, o)
			if err != nil {
				t.Fatal(err)
			}
			designFailed := false
			for _, tr := range res.Trials {
				designFailed = designFailed || tr.Iteration == 0 && tr.Status == Failed
			}
			if !designFailed {
				t.Fatal("no evaluation of the design failed: the classifier did not take part in every proposal")
			}
			if strings.Contains(logs.String(), "space-filling") {
				t.Fatalf("the study fell back to space-filling points:\n%s", logs.String())
			}
		})
	}
}

// Ask/Tell with the curve model: Report relays the pruner's decisions as
// without it, and the next Ask is proposed by the GP over (x, t) from the
// reports told so far.
func TestPruneCurveModelAskTell(t *testing.T) {
	ctx := context.Background()
	obj := curveObjective{steps: 9}
	info, _ := obj.Info(ctx)
	p := &stateRecorder{}
	o := curveOptions(p)
	o.Iters = 6
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 + 6 { // Ask has no budget: the design, then 6 proposals
		ts, err := s.Ask(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		id, v := ts[0].ID, 0.0
		q := 1 - (ts[0].X[0]-0.3)*(ts[0].X[0]-0.3) - (ts[0].X[1]-0.3)*(ts[0].X[1]-0.3)
		for k := 1; k <= obj.steps; k++ {
			v = q * (1 - math.Exp(-float64(k)/3))
			if stop, err := s.Report(ctx, id, k, v); err != nil {
				t.Fatal(err)
			} else if stop {
				break
			}
		}
		if err := s.Tell(ctx, id, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	trials := s.Trials()
	if len(trials) != 4+6 || checkPruned(t, trials, obj.steps) == 0 {
		t.Fatalf("%d trials, %d pruned", len(trials), checkPruned(t, trials, obj.steps))
	}
	if len(p.X) != 6 {
		t.Fatalf("%d acquisition calls, want 6", len(p.X))
	}
	want := (&fidelity{maxStep: obj.steps, pruned: true}).dataset(trials[:len(trials)-1], 2, false)
	if !mat.Equal(p.X[5], want.X) {
		t.Fatal("the last Ask's GP inputs are not the (x, t) rows of the trials told before it")
	}
}

// A new study's Pruning.Model "" settles on the curve model where it can
// run and on the stand-in elsewhere; it is stored explicitly. A study
// stored with "" (made before the curve model was the default) keeps the
// stand-in when it is reopened.
func TestPruneModelDefault(t *testing.T) {
	ctx := context.Background()
	curveInfo, _ := curveObjective{steps: 9}.Info(ctx)
	for _, c := range []struct {
		name string
		info sdk.Info
		o    func(o *Options)
		want string
	}{
		{"max step", curveInfo, func(o *Options) {}, PruneModelCurve},
		{"no max step", unitInfo(2), func(o *Options) {}, PruneModelLast},
		{"the pruner's max step", unitInfo(2), func(o *Options) { o.Pruning = Pruning{Rule: PrunerASHA, MaxStep: 9} }, PruneModelCurve},
		{"local model", curveInfo, func(o *Options) { o.Model = ModelLocal }, PruneModelLast},
		{"suggester", curveInfo, func(o *Options) { o.Proposer, o.Suggester = nil, gridSuggester{t} }, PruneModelLast},
		{"chosen", curveInfo, func(o *Options) { o.Pruning.Model = PruneModelLast }, PruneModelLast},
	} {
		o := baseOptions(1)
		o.Pruning = Pruning{Rule: PrunerMedian}
		c.o(&o)
		db := MemoryStorage()
		o.DB, o.Name = db, "s"
		s, err := NewStudy(ctx, c.info, o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s.Close()
		if got, _, err := StoredSettings(ctx, db, "s"); err != nil || got.Pruning.Model != c.want || (s.mf != nil) != (c.want == PruneModelCurve) {
			t.Errorf("%s: stored %q (%v), want %q", c.name, got.Pruning.Model, err, c.want)
		}
	}
	// A study stored with "" before the default changed.
	db := MemoryStorage()
	o := baseOptions(1)
	o.DB, o.Name, o.Pruning = db, "old", Pruning{Rule: PrunerMedian, Model: PruneModelLast}
	s, err := NewStudy(ctx, curveInfo, o)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	editStoredSettings(t, db, "old", `,"model":"last"`, "")
	if s, err = OpenStudy(ctx, db, "old", Options{Proposer: testProposer()}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.mf != nil || s.opts.Pruning.Model != "" {
		t.Fatalf("a study stored with no pruner model reopened with %q (curve model %v)", s.opts.Pruning.Model, s.mf != nil)
	}
}

// movingPeak's curves peak at x0 = 0.2 at the first step and move to 0.8
// at the last: a search of the mean at another step than full training's
// finds a point worse at full training.
type movingPeak struct{ curveObjective } // curveObjective's Info: two coordinates, MaxStep steps

func (o movingPeak) Evaluate(ctx context.Context, x []float64) (float64, error) {
	var v float64
	for k := 1; k <= o.steps; k++ {
		c := 0.2 + 0.6*float64(k-1)/float64(o.steps-1)
		v = 1 - (x[0]-c)*(x[0]-c) - 0.5*(x[1]-0.3)*(x[1]-0.3)
		if prune, err := sdk.Report(ctx, k, v); err != nil || prune {
			return v, err
		}
	}
	return v, nil
}

// RecommendRefine on a GP over (x, t) maximizes the posterior mean at full
// training over the whole space: x̄ has the space's dimension, is not an
// evaluated point, its mean (read at t = 1) beats every complete trial's
// and is the GP's there, and it honours a pinned parameter. The final
// values peak at (0.8, 0.3) (the early steps elsewhere), and x̄ lies
// closer to it than the best evaluated trial.
func TestRecommendRefineFidelity(t *testing.T) {
	ctx := context.Background()
	obj := movingPeak{curveObjective{steps: 9}}
	info, _ := obj.Info(ctx)
	for _, c := range []struct {
		name string
		o    func() Options
	}{
		{"curve model", func() Options { return curveOptions(randomProposer{}) }},
		{"multi-fidelity", func() Options {
			o := mfOptions(&fixedFidelity{t: 0.5})
			o.Iters = 6
			return o
		}},
		{"curve model, x0 fixed", func() Options {
			o := curveOptions(randomProposer{})
			o.Fixed = map[string]float64{info.Params[0].Name: 0.65}
			return o
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o()
			o.Recommend = RecommendRefine
			s, err := NewStudy(ctx, info, o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rec, ev := refinedAndEvaluated(t, s, obj)
			if rec.TrialID >= 0 || len(rec.U) != 2 || len(rec.X) != 2 || rec.Value != nil {
				t.Fatalf("refined %+v: want an unevaluated point of 2 coordinates", rec)
			}
			if !(rec.Mean > ev.Mean) {
				t.Fatalf("refined mean %v does not beat the best complete trial's %v", rec.Mean, ev.Mean)
			}
			ds := s.mf.dataset(s.trials, 2, false)
			fr, err := s.fitCached(context.Background(), ds, s.lastIter+1)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := fr.gp.MeanVar(append(append([]float64(nil), rec.U...), 1))
			if got := ds.native(m); math.Abs(got-rec.Mean) > 1e-9 {
				t.Fatalf("x̄'s mean %v, the GP's at (x̄, 1) %v", rec.Mean, got)
			}
			dist := func(u []float64) float64 { return math.Hypot(u[0]-0.8, u[1]-0.3) }
			if pinned := o.Fixed != nil; pinned {
				if rec.X[0] != 0.65 {
					t.Fatalf("x̄ %v: the fixed x0 = 0.65 not kept", rec.X)
				}
				dist = func(u []float64) float64 { return math.Abs(u[1] - 0.3) }
			}
			if dist(rec.U) >= dist(s.trials[ev.TrialID].U) {
				t.Fatalf("x̄ %v no closer to the peak than the best trial's %v", rec.U, s.trials[ev.TrialID].U)
			}
		})
	}
}
