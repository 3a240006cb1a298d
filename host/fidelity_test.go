package host

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/problems/conditional"
	"github.com/tesbo/tesbo/sdk"
)

// fixedFidelity proposes uniform points at fidelity t and records the GP
// data and pending points it was given.
type fixedFidelity struct {
	t float64

	mu       sync.Mutex
	seen     []*mat.Dense
	pending  []*mat.Dense
	imported []int // State.Imported of every call, both kinds
}

func (p *fixedFidelity) Propose(_ context.Context, s *acq.State, q int) (*mat.Dense, error) {
	p.mu.Lock()
	p.imported = append(p.imported, s.Imported)
	p.mu.Unlock()
	return randomProposer{}.Propose(context.Background(), s, q)
}

func (p *fixedFidelity) ProposeFidelity(_ context.Context, s *acq.State, q int, cost acq.FidelityCost) (*mat.Dense, error) {
	p.mu.Lock()
	p.seen = append(p.seen, mat.DenseCopyOf(s.GP.X()))
	p.pending = append(p.pending, s.Pending)
	p.imported = append(p.imported, s.Imported)
	p.mu.Unlock()
	X, _ := randomProposer{}.Propose(context.Background(), s, q)
	for i := range q {
		X.Set(i, s.GP.Dim()-1, cost.Snap(p.t))
	}
	return X, nil
}

func mfOptions(p acq.Proposer) Options {
	o := baseOptions(3)
	o.Acquisition, o.Proposer = "test-fidelity", p
	o.Batch, o.Iters, o.Init = 2, 4, 3
	o.MultiFidelity = MultiFidelity{Enabled: true}
	return o
}

// The host stops an evaluation exactly at the step the acquisition chose
// (0.3 of 9 steps: step 3), stores it as pruned at that step with its
// target, and runs the initial design to the end.
func TestFidelityStopsAtChosenStep(t *testing.T) {
	obj := curveObjective{steps: 9}
	p := &fixedFidelity{t: 0.3}
	res, err := Optimize(context.Background(), obj, mfOptions(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 3+4*2 {
		t.Fatalf("%d trials, want 11", len(res.Trials))
	}
	for _, tr := range res.Trials {
		last := tr.Intermediates[len(tr.Intermediates)-1]
		if tr.Iteration == 0 {
			if tr.Status != Complete || len(tr.Intermediates) != 9 {
				t.Fatalf("design trial %d: %s after %d steps, want complete after 9", tr.ID, tr.Status, len(tr.Intermediates))
			}
			continue
		}
		if tr.Status != Pruned || len(tr.Intermediates) != 3 || last.Step != 3 || tr.Meta[fidelityStepKey] != "3" ||
			math.Float64bits(tr.Value) != math.Float64bits(last.Value) {
			t.Fatalf("trial %d: %s, %d reports, last %+v, meta %v, value %v; want pruned at step 3", tr.ID, tr.Status, len(tr.Intermediates), last, tr.Meta, tr.Value)
		}
	}
	if res.Best == nil || res.Trials[res.Best.TrialID].Status != Complete {
		t.Fatalf("recommended %+v, not a complete trial", res.Best)
	}
	// The second batch's GP sees the design's thinned curves and the
	// first batch's stopped ones; its pending points are none (Run's
	// batches are synchronous).
	X := p.seen[1]
	if n, d := X.Dims(); d != 3 || n != 3*5+2*2 {
		t.Fatalf("GP data %d×%d, want 19×3 (steps 1, 2, 4, 8 and t = 1 of each complete trial, steps 1 and 3 of each stopped one)", n, d)
	}
	for i := range 15 {
		if want := []float64{1, 2, 4, 8, 9}[i%5] / 9; math.Abs(X.At(i, 2)-want) > 1e-12 {
			t.Fatalf("row %d at t = %v, want %v", i, X.At(i, 2), want)
		}
	}
}

// The GP's observations are the trials' thinned intermediate values at
// t = step/MaxStep, a complete trial's value at t = 1.
func TestFidelityDatasetRows(t *testing.T) {
	f := &fidelity{maxStep: 100}
	curve := func(n int) []Intermediate {
		var p []Intermediate
		for k := 1; k <= n; k++ {
			p = append(p, Intermediate{Step: k, Value: float64(k)})
		}
		return p
	}
	trials := []Trial{
		{ID: 0, U: []float64{0.1}, Status: Complete, Value: 500, Intermediates: curve(100)},
		{ID: 1, U: []float64{0.2}, Status: Pruned, Value: 40, Intermediates: curve(40)},
		{ID: 2, U: []float64{0.3}, Status: Failed},
		{ID: 3, U: []float64{0.4}, Status: Complete, Value: 7},
	}
	ds := f.dataset(trials, 1, false)
	want := [][3]float64{ // trial, t, value
		{0, 0.06, 6}, {0, 0.12, 12}, {0, 0.24, 24}, {0, 0.49, 49}, {0, 0.99, 99}, {0, 1, 500},
		{1, 0.01, 1}, {1, 0.02, 2}, {1, 0.05, 5}, {1, 0.1, 10}, {1, 0.2, 20}, {1, 0.4, 40},
		{3, 1, 7},
	}
	if ds.n() != len(want) {
		t.Fatalf("%d rows, want %d", ds.n(), len(want))
	}
	// Trial 1's steps go back geometrically from 40: 40, 20, 10, 5, and
	// the steps at or below 2.5 and 1.25; trial 0's from 99 (its step 100
	// is its value at t = 1), five of them, then t = 1.
	for i, w := range want {
		u := ds.X.RawRowView(i)
		v := ds.native(ds.y[i])
		if ds.ids[i] != int(w[0]) || math.Abs(u[1]-w[1]) > 1e-12 || math.Abs(v-w[2]) > 1e-9 || u[0] != trials[int(w[0])].U[0] {
			t.Fatalf("row %d: trial %d at %v value %v, want %v", i, ds.ids[i], u, v, w)
		}
	}
}

func TestFidelityRows(t *testing.T) {
	pts := func(steps ...int) []Intermediate {
		var p []Intermediate
		for _, s := range steps {
			p = append(p, Intermediate{Step: s})
		}
		return p
	}
	for _, c := range []struct {
		p    []Intermediate
		k    int
		want []int
	}{
		{pts(1, 2, 3, 4, 5, 6, 7, 8, 9), 6, []int{0, 1, 3, 8}},
		{pts(3), 6, []int{0}},
		{pts(1, 2, 3), 1, []int{2}},
		{pts(10, 20, 30, 40), 6, []int{0, 1, 3}},
		{nil, 6, nil},
	} {
		got := fidelityRows(c.p, c.k)
		if len(got) != len(c.want) {
			t.Fatalf("%v k=%d: %v, want %v", c.p, c.k, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%v k=%d: %v, want %v", c.p, c.k, got, c.want)
			}
		}
	}
}

// A multi-fidelity study with the default acquisition resumed after an
// interruption proposes bitwise what the uninterrupted one did, fidelities
// included.
func TestFidelityResumeBitwise(t *testing.T) {
	if testing.Short() {
		t.Skip("runs TES")
	}
	ctx := context.Background()
	obj := curveObjective{steps: 9}
	opts := func() Options {
		o := Options{Acquisition: "tes", Batch: 1, Iters: 6, Init: 3, Seed: 5, MultiFidelity: MultiFidelity{Enabled: true, CostFixed: 0.01}}
		return o
	}
	want, err := Optimize(ctx, obj, opts())
	if err != nil {
		t.Fatal(err)
	}
	stopped := 0
	for _, tr := range want.Trials {
		if tr.Status == Pruned {
			stopped++
		}
	}
	if stopped == 0 {
		t.Fatalf("no trial of %d stopped early: the test would not see a stored target step", len(want.Trials))
	}
	got := reopenAndRun(t, interruptedStudy(t, obj, opts(), 6), Options{}, obj)
	sameTrials(t, want.Trials, got)
	for i := range got {
		if a, b := want.Trials[i], got[i]; a.Meta[fidelityStepKey] != b.Meta[fidelityStepKey] || len(a.Intermediates) != len(b.Intermediates) {
			t.Fatalf("trial %d: target %q after %d steps, want %q after %d", i, b.Meta[fidelityStepKey], len(b.Intermediates), a.Meta[fidelityStepKey], len(a.Intermediates))
		}
	}
}

// Bad settings are refused before anything runs.
func TestFidelityValidate(t *testing.T) {
	ctx := context.Background()
	for i, c := range []struct {
		o   func(o *Options)
		obj curveObjective
	}{
		{func(o *Options) { o.MultiFidelity.CostFixed = -1 }, curveObjective{steps: 9}},
		{func(o *Options) { o.MultiFidelity.CostFixed = 101 }, curveObjective{steps: 9}},
		{func(o *Options) { o.MultiFidelity.CostFixed = math.NaN() }, curveObjective{steps: 9}},
		{func(o *Options) { o.MultiFidelity = MultiFidelity{CostFixed: 1} }, curveObjective{steps: 9}},
		{func(o *Options) { o.Pruning = Pruning{Rule: PrunerMedian} }, curveObjective{steps: 9}},
		{func(o *Options) {}, curveObjective{steps: 1}},
		{func(o *Options) { o.Proposer = randomProposer{} }, curveObjective{steps: 9}},
	} {
		o := mfOptions(&fixedFidelity{t: 1})
		c.o(&o)
		if _, err := Optimize(ctx, c.obj, o); err == nil {
			t.Errorf("case %d: accepted", i)
		} else {
			t.Logf("case %d: %v", i, err)
		}
	}
}

// With Ask and Tell, a multi-fidelity trial carries the step it runs to,
// Report says stop exactly there, and Tell records it stopped at that
// step.
func TestFidelityAskTell(t *testing.T) {
	ctx := context.Background()
	s := halfFidelityStudy(t, nil)
	for range 2 {
		ts, err := s.Ask(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= 10; k++ {
			if p, err := s.Report(ctx, ts[0].ID, k, float64(k)); p || err != nil {
				t.Fatalf("design trial step %d: stop %v, %v", k, p, err)
			}
		}
		if err := s.Tell(ctx, ts[0].ID, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	ts, err := s.Ask(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	id := ts[0].ID
	if ts[0].Meta[fidelityStepKey] != "5" {
		t.Fatalf("trial meta %v, want step 5 (t = 0.45 rounded up to a step of 10)", ts[0].Meta)
	}
	for k := 1; k <= 5; k++ {
		p, err := s.Report(ctx, id, k, float64(k))
		if err != nil || p != (k == 5) {
			t.Fatalf("step %d: stop %v, %v; want stop only at 5", k, p, err)
		}
	}
	if err := s.Tell(ctx, id, 5, nil); err != nil {
		t.Fatal(err)
	}
	if tr := s.Trials()[id]; tr.Status != Pruned || len(tr.Intermediates) != 5 || tr.Meta[fidelityStepKey] != "5" {
		t.Fatalf("trial %+v, want pruned at step 5", tr)
	}
}

// The web view's posterior of a study whose GP has a fidelity input gives
// the trusted maximizers TES carried without their fidelity coordinate:
// points of the study's parameters, read at full training.
func TestFidelityPosteriorTrusted(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	o := Options{DB: wrap(db), Name: "c", Acquisition: "tes", Batch: 1, Iters: 2, Init: 4, Seed: 5,
		Pruning: Pruning{Rule: PrunerMedian, Model: PruneModelCurve}}
	if _, err := Optimize(ctx, curveObjective{steps: 9}, o); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPosterior(ctx, wrap(db), "c", 100)
	if err != nil {
		t.Fatal(err)
	}
	xs, err := p.TrustedMaximizers()
	if err != nil || len(xs) == 0 {
		t.Fatalf("trusted maximizers %v: %v", xs, err)
	}
	for _, x := range xs {
		if len(x) != p.Dim() {
			t.Fatalf("a trusted maximizer %v of %d coordinates, the study has %d parameters", x, len(x), p.Dim())
		}
	}
}

// A warm-started study tells its acquisition how many of the model's
// observations were imported (acq.State.Imported: the default one
// evaluates x̄ first), multi-fidelity or not.
func TestWarmStartTellsImported(t *testing.T) {
	ctx := context.Background()
	obj := curveObjective{steps: 9}
	raw := openDB(t, t.TempDir()+"/w.db", true)
	defer raw.Close()
	src := sourceStudy(t, wrap(raw), obj, Options{Acquisition: "test-random", Proposer: randomProposer{}, Batch: 1, Iters: 2, Init: 3, Seed: 2})
	for _, mf := range []bool{false, true} {
		p := &fixedFidelity{t: 1}
		o := Options{Acquisition: "test-fidelity", Proposer: p, Batch: 1, Iters: 2, NoInit: true, Seed: 4,
			WarmStart: []string{"old"}, DB: wrap(raw), Grace: -1, MultiFidelity: MultiFidelity{Enabled: mf}}
		o.Name = fmt.Sprintf("mf-%v", mf)
		if _, err := Optimize(ctx, obj, o); err != nil {
			t.Fatal(err)
		}
		if len(p.imported) != 2 {
			t.Fatalf("multi-fidelity %v: %d proposals, want 2", mf, len(p.imported))
		}
		for i, n := range p.imported {
			if n != len(src) {
				t.Fatalf("multi-fidelity %v, proposal %d: State.Imported %d, want the %d imported trials", mf, i, n, len(src))
			}
		}
	}
}

// pinCurveObjective is pinObjective's function reached along a saturating
// learning curve of 6 steps.
type pinCurveObjective struct{ pinObjective }

func (o *pinCurveObjective) Info(context.Context) (sdk.Info, error) {
	i := pinSpace
	i.MaxStep = 6
	return i, nil
}

func (o *pinCurveObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	f, _ := o.pinObjective.Evaluate(ctx, x)
	return saturate6(ctx, f)
}

// saturate6 reports f − e^{−k/2} at steps k = 1…6 until the host says
// stop, and returns the last value reported: f reached along a saturating
// learning curve.
func saturate6(ctx context.Context, f float64) (float64, error) {
	var v float64
	for k := 1; k <= 6; k++ {
		v = f - math.Exp(-float64(k)/2)
		if stop, err := sdk.Report(ctx, k, v); err != nil || stop {
			return v, err
		}
	}
	return v, nil
}

// Fixed parameters in a multi-fidelity study: the acquisition is told the
// pins of x with the fidelity left free, and every trial — the design, the
// acquisition's, stopped or complete — holds the pinned values exactly,
// in the trials and in what the objective receives.
func TestFidelityFixed(t *testing.T) {
	p := &pinRecorder{fixedFidelity: fixedFidelity{t: 0.5}}
	o := mfOptions(p)
	o.Fixed = pins
	obj := &pinCurveObjective{}
	res, err := Optimize(context.Background(), obj, o)
	if err != nil {
		t.Fatal(err)
	}
	var xs [][]float64
	stopped := 0
	for _, tr := range res.Trials {
		xs = append(xs, tr.X)
		if tr.Status == Pruned && tr.Meta[fidelityStepKey] == "3" {
			stopped++
		}
	}
	checkPinned(t, xs, pins)
	checkPinned(t, obj.seen, pins)
	if stopped != 4*2 {
		t.Fatalf("%d trials stopped at step 3, want the 8 the acquisition chose", stopped)
	}
	space, err := NewSpace(pinSpace.Params)
	if err != nil {
		t.Fatal(err)
	}
	want, err := space.pins(pins)
	if err != nil {
		t.Fatal(err)
	}
	d := len(pinSpace.Params)
	if len(p.pinned) != 4 {
		t.Fatalf("%d calls recorded, want 4", len(p.pinned))
	}
	for _, pin := range p.pinned {
		if len(pin) != d+1 || !math.IsNaN(pin[d]) {
			t.Fatalf("pins %v: want %d of x and the fidelity free", pin, d)
		}
		for i, u := range want.unit() {
			if math.Float64bits(pin[i]) != math.Float64bits(u) {
				t.Fatalf("pins %v: coordinate %d is %v, want the study's pin %v", pin, i, pin[i], u)
			}
		}
	}
}

// pinRecorder is fixedFidelity recording State.Pinned.
type pinRecorder struct {
	fixedFidelity
	pinned [][]float64
}

func (p *pinRecorder) ProposeFidelity(ctx context.Context, s *acq.State, q int, cost acq.FidelityCost) (*mat.Dense, error) {
	p.mu.Lock()
	p.pinned = append(p.pinned, append([]float64(nil), s.Pinned...))
	p.mu.Unlock()
	return p.fixedFidelity.ProposeFidelity(ctx, s, q, cost)
}

// The default acquisition runs a multi-fidelity study with fixed
// parameters from its own proposals (no space-filling fallback), every
// trial pinned.
func TestFidelityFixedTES(t *testing.T) {
	var logs strings.Builder
	obj := &pinCurveObjective{}
	o := Options{Acquisition: "tes", Batch: 1, Iters: 6, Init: 3, Seed: 2, Fixed: pins, Grace: -1,
		MultiFidelity: MultiFidelity{Enabled: true}, Logger: zerolog.New(&logs)}
	res, err := Optimize(context.Background(), obj, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 9 {
		t.Fatalf("%d trials, want 9", len(res.Trials))
	}
	var xs [][]float64
	for _, tr := range res.Trials {
		xs = append(xs, tr.X)
	}
	checkPinned(t, xs, pins)
	checkPinned(t, obj.seen, pins)
	if strings.Contains(logs.String(), "space-filling") {
		t.Fatalf("the study fell back to space-filling points:\n%s", logs.String())
	}
}

// condCurveObjective is cond/branches reached along a saturating learning
// curve of 6 steps; cond/branches itself refuses a point where an inactive
// parameter has a value or an active one has none.
type condCurveObjective struct{ sdk.Objective }

func (o condCurveObjective) Info(ctx context.Context) (sdk.Info, error) {
	i, err := o.Objective.Info(ctx)
	i.MaxStep = 6
	return i, err
}

func (o condCurveObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	f, err := o.Objective.Evaluate(ctx, x)
	if err != nil {
		return 0, err
	}
	return saturate6(ctx, f)
}

// A multi-fidelity study on a conditional space: the acquisition is told
// the conditional coordinates of (x, t), t unconditional, and a canonical
// map that leaves t alone; the default acquisition runs it from its own
// proposals, some stopped early, and no inactive value ever reaches the
// objective (it would fail the trial).
func TestFidelityConditional(t *testing.T) {
	ctx := context.Background()
	c, _ := conditional.New("cond/branches")
	rec := &condRecorder{fixedFidelity: fixedFidelity{t: 0.5}}
	if _, err := Optimize(ctx, condCurveObjective{c}, mfOptions(rec)); err != nil {
		t.Fatal(err)
	}
	want := []bool{false, true, true, true, true, true, false, false}
	if len(rec.cond) == 0 || !slices.Equal(rec.cond[0], want) || !rec.canon {
		t.Fatalf("conditional coordinates %v (canonical map %v), want %v and a map", rec.cond, rec.canon, want)
	}

	var logs strings.Builder
	o := Options{Acquisition: "tes", Batch: 1, Iters: 8, Init: 3, Seed: 4, Grace: -1,
		MultiFidelity: MultiFidelity{Enabled: true}, Logger: zerolog.New(&logs)}
	res, err := Optimize(ctx, condCurveObjective{c}, o)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := c.Info(ctx)
	stopped := 0
	for _, tr := range res.Trials {
		if tr.Status == Pruned {
			stopped++
		}
		if tr.Status != Complete && tr.Status != Pruned {
			t.Fatalf("trial %d: %s %s", tr.ID, tr.Status, tr.Error)
		}
		for i, a := range sdk.Space(info.Params).Active(tr.X) {
			if a == math.IsNaN(tr.X[i]) {
				t.Fatalf("trial %d: %v, parameter %s active %v", tr.ID, tr.X, info.Params[i].Name, a)
			}
		}
	}
	if strings.Contains(logs.String(), "space-filling") {
		t.Fatalf("the study fell back to space-filling points:\n%s", logs.String())
	}
	if stopped == 0 {
		t.Fatal("no trial stopped early: the acquisition never chose a fidelity below the last step")
	}
}

// condRecorder is fixedFidelity recording State.Conditional and whether
// State.Canonical is set, after checking that the map leaves t alone.
type condRecorder struct {
	fixedFidelity
	cond  [][]bool
	canon bool
}

func (p *condRecorder) ProposeFidelity(ctx context.Context, s *acq.State, q int, cost acq.FidelityCost) (*mat.Dense, error) {
	u := []float64{0.9, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.25} // branch c, t = 0.25
	if s.Canonical != nil {
		s.Canonical(u)
	}
	p.mu.Lock()
	p.cond = append(p.cond, s.Conditional)
	p.canon = s.Canonical != nil && u[7] == 0.25 && u[1] == 0.5 && u[4] == 0.3
	p.mu.Unlock()
	return p.fixedFidelity.ProposeFidelity(ctx, s, q, cost)
}

// A multi-fidelity trial's step is stored when it is proposed: a study
// reopened while the trial runs stops it where the uninterrupted one
// would (it ran to the end: the step was stored only with the outcome).
func TestFidelityStepStoredWithProposal(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	s := halfFidelityStudy(t, wrap(db))
	for range 2 {
		ts, err := s.Ask(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Tell(ctx, ts[0].ID, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	ts, err := s.Ask(ctx, 1)
	if err != nil || ts[0].Meta[fidelityStepKey] != "5" {
		t.Fatalf("asked %+v, %v", ts, err)
	}
	s.Close()
	s, err = OpenStudy(ctx, wrap(db), "mf", Options{Proposer: &fixedFidelity{t: 0.45}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := s.InFlight()
	if len(in) != 1 || in[0].Meta[fidelityStepKey] != "5" {
		t.Fatalf("reopened in-flight trials %+v, want the step 5 kept", in)
	}
	for k := 1; k <= 5; k++ {
		if p, err := s.Report(ctx, in[0].ID, k, float64(k)); err != nil || p != (k == 5) {
			t.Fatalf("step %d: stop %v, %v; want stop only at 5", k, p, err)
		}
	}
}

// halfFidelityStudy is a multi-fidelity study (study "mf" in db, or in
// memory for a nil db) of a 2-d objective with 10 steps, an initial
// design of 2 and one iteration whose point runs to t = 0.45: step 5.
func halfFidelityStudy(t *testing.T, db *Storage) *Study {
	t.Helper()
	o := mfOptions(&fixedFidelity{t: 0.45})
	o.Batch, o.Init, o.Iters = 1, 2, 1
	if db != nil {
		o.DB, o.Name = db, "mf"
	}
	info := unitInfo(2)
	info.MaxStep = 10
	s, err := NewStudy(context.Background(), info, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
