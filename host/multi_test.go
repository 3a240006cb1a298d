package host

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// twoObjectives is a 2-d objective with two conflicting objectives and a
// constraint: maximize f1 = −(x0−0.2)² − (x1−0.5)², minimize
// f2 = (x0−0.8)² + (x1−0.5)², subject to g = x0 + x1 ≤ bound.
type twoObjectives struct {
	bound float64
	calls atomic.Int64 // evaluations run in parallel
}

func (o *twoObjectives) Info(context.Context) (sdk.Info, error) {
	i := unitInfo(2)
	i.Name = "two"
	i.Outputs = []sdk.Output{{Name: "f1", Goal: sdk.Maximize}, {Name: "f2", Goal: sdk.Minimize},
		{Name: "g", Goal: sdk.Constraint, Feasible: sdk.AtMost, Bound: sdk.Bound(o.bound)}}
	return i, nil
}

func (o *twoObjectives) Evaluate(context.Context, []float64) (float64, error) {
	return 0, errors.New("Evaluate called on an objective of several outputs")
}

func (o *twoObjectives) EvaluateOutputs(_ context.Context, x []float64) ([]float64, error) {
	o.calls.Add(1)
	f1 := -(x[0]-0.2)*(x[0]-0.2) - (x[1]-0.5)*(x[1]-0.5)
	f2 := (x[0]-0.8)*(x[0]-0.8) + (x[1]-0.5)*(x[1]-0.5)
	return []float64{f1, f2, x[0] + x[1]}, nil
}

func TestMultiOutputStudy(t *testing.T) {
	obj := &twoObjectives{bound: 10}
	info, _ := obj.Info(context.Background())
	s, err := NewStudy(context.Background(), info, Options{Batch: 2, Iters: 3, Init: 4, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.Acquisition != DefaultAcquisition {
		t.Errorf("acquisition %s, want the default %s (tes has a several-output form)", s.opts.Acquisition, DefaultAcquisition)
	}
	for it := 1; it <= 3; it++ {
		if fb := s.iters[it].fallback; fb != "" {
			t.Errorf("iteration %d fell back: %s", it, fb)
		}
	}
	if res.Evaluations != 10 || obj.calls.Load() != 10 {
		t.Fatalf("%d evaluations, %d calls", res.Evaluations, obj.calls.Load())
	}
	for _, tr := range res.Trials {
		want, _ := obj.EvaluateOutputs(context.Background(), tr.X)
		if tr.Status != Complete || len(tr.Outputs) != 3 || tr.Outputs[1] != want[1] || tr.Value != want[0] {
			t.Fatalf("trial %d: %+v", tr.ID, tr)
		}
	}
}

func TestMultiOutputRefusals(t *testing.T) {
	obj := &twoObjectives{bound: 1}
	info, _ := obj.Info(context.Background())
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Acquisition: "ei"}, "not an acq.MultiProposer"},
		{Options{RefPoint: []float64{1}}, "want one per objective output (2)"},
		{Options{RefPoint: []float64{1, math.NaN()}}, "is NaN"},
		{Options{Pruning: Pruning{Rule: PrunerMedian}}, "early stopping (a pruner) judges evaluations by one reported value"},
	} {
		_, err := NewStudy(context.Background(), info, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: got %v, want %q", c.o, err, c.want)
		}
	}
}

// TestMultiOutputMalformedInfo: an embedding program's Info reaches the
// host only through NewStudy (the loader checks plugins'), so NewStudy
// refuses malformed outputs in one line, before anything is stored.
func TestMultiOutputMalformedInfo(t *testing.T) {
	withOutputs := func(outs ...sdk.Output) sdk.Info {
		i := unitInfo(2)
		i.Outputs = outs
		return i
	}
	var seven []sdk.Output
	for k := 0; k < sdk.MaxObjectives+1; k++ {
		seven = append(seven, sdk.Output{Name: string(rune('a' + k)), Goal: sdk.Minimize})
	}
	for want, info := range map[string]sdk.Info{
		"at most 6 are allowed": withOutputs(seven...),
		"duplicate name":        withOutputs(sdk.Output{Name: "a"}, sdk.Output{Name: "a", Goal: sdk.Minimize}),
		"no objective among":    withOutputs(sdk.Output{Name: "g", Goal: sdk.Constraint, Feasible: sdk.AtMost, Bound: sdk.Bound(1)}),
		"needs a Bound":         withOutputs(sdk.Output{Name: "f"}, sdk.Output{Name: "g", Goal: sdk.Constraint, Feasible: sdk.AtMost}),
	} {
		_, err := NewStudy(context.Background(), info, Options{})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("outputs %+v: got %v, want an error saying %q", info.Outputs, err, want)
		}
	}
}

// A constraint keeps parego's proposals out of the infeasible region: with
// g = x0 + x1 ≤ 0.6 most BO proposals are feasible, while with the bound
// lifted they go where both objectives are better (f1 peaks at x0 = 0.2,
// f2 at x0 = 0.8, both at x1 = 0.5, so the front x0 ∈ [0.2, 0.8], x1 = 0.5
// is mostly infeasible: x0 + x1 ≤ 0.6 holds on it only for x0 ≤ 0.1).
func TestMultiOutputConstraintAvoidsInfeasible(t *testing.T) {
	feasibleShare := func(bound float64) float64 {
		obj := &twoObjectives{bound: bound}
		res, err := Optimize(context.Background(), obj, Options{Acquisition: "parego", Batch: 2, Iters: 8, Init: 6, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		n, ok := 0, 0
		for _, tr := range res.Trials {
			if tr.Iteration >= 1 {
				n++
				if tr.X[0]+tr.X[1] <= 0.6+1e-9 {
					ok++
				}
			}
		}
		return float64(ok) / float64(n)
	}
	with, without := feasibleShare(0.6), feasibleShare(10)
	t.Logf("share of BO proposals with x0+x1 ≤ 0.6: constrained %.2f, unconstrained %.2f", with, without)
	if with < 0.7 || without > 0.5 {
		t.Fatalf("constrained %.2f (want ≥ 0.7), unconstrained %.2f (want ≤ 0.5)", with, without)
	}
}

// A two-objective study interrupted mid-batch and resumed in a new Study
// gives bitwise the trials (points and every output) of an uninterrupted
// one: the per-output fits' warm starts are stored with each iteration.
func TestMultiOutputResumeExact(t *testing.T) {
	ctx := context.Background()
	opts := Options{Acquisition: "parego", Batch: 2, Iters: 5, Init: 4, Seed: 17, Grace: -1}
	want, err := Optimize(ctx, &twoObjectives{bound: 0.9}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := reopenAndRun(t, interruptedStudy(t, &twoObjectives{bound: 0.9}, opts, 9), Options{}, &twoObjectives{bound: 0.9})
	sameTrials(t, want.Trials, got)
	for i := range got {
		for k := range got[i].Outputs {
			if math.Float64bits(got[i].Outputs[k]) != math.Float64bits(want.Trials[i].Outputs[k]) {
				t.Fatalf("trial %d output %d: %v vs %v", i, k, got[i].Outputs[k], want.Trials[i].Outputs[k])
			}
		}
		if len(got[i].Outputs) != 3 {
			t.Fatalf("trial %d has %d outputs after resume", i, len(got[i].Outputs))
		}
	}
}

// fourObjectives is a 3-d objective with four conflicting objectives to
// minimize, the squared distances to four corners of the cube: enough
// objectives for the hypervolume's WFG path (pareto.Contribution in x̄'s
// search).
type fourObjectives struct{}

func (fourObjectives) Info(context.Context) (sdk.Info, error) {
	i := unitInfo(3)
	i.Name = "four"
	for _, n := range []string{"a", "b", "c", "d"} {
		i.Outputs = append(i.Outputs, sdk.Output{Name: n, Goal: sdk.Minimize})
	}
	i.RefPoint = []float64{3, 3, 3, 3}
	return i, nil
}

func (fourObjectives) Evaluate(context.Context, []float64) (float64, error) {
	return 0, errors.New("Evaluate called on an objective of several outputs")
}

func (fourObjectives) EvaluateOutputs(_ context.Context, x []float64) ([]float64, error) {
	corners := [4][3]float64{{0, 0, 0}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}}
	out := make([]float64, 4)
	for k, c := range corners {
		for j := range c {
			out[k] += (x[j] - c[j]) * (x[j] - c[j])
		}
	}
	return out, nil
}

// A four-objective study under the default acquisition, interrupted and
// resumed, gives bitwise the trials of an uninterrupted one.
func TestFourObjectivesResumeExact(t *testing.T) {
	ctx := context.Background()
	info, _ := fourObjectives{}.Info(ctx)
	if err := info.Validate(); err != nil {
		t.Fatal(err)
	}
	opts := Options{Batch: 2, Iters: 2, Init: 4, Seed: 23, Grace: -1}
	want, err := Optimize(ctx, fourObjectives{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := reopenAndRun(t, interruptedStudy(t, fourObjectives{}, opts, 7), Options{}, fourObjectives{})
	sameTrials(t, want.Trials, got)
}

// The last record's Pareto set is the observed front of the feasible
// trials (a noise-free objective: the posterior means keep the order), its
// hypervolume is that front's above the derived reference point, and the
// feasible fraction counts the trials within the bound.
func TestMultiOutputRecord(t *testing.T) {
	obj := &twoObjectives{bound: 0.9}
	res, err := Optimize(context.Background(), obj, Options{Acquisition: "parego", Batch: 2, Iters: 4, Init: 6, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Multi
	if m == nil || m.Pareto == nil || m.Hypervolume == nil || m.FeasibleFraction == nil || !m.RefPointDerived || len(m.RefPoint) != 2 {
		t.Fatalf("multi record: %+v", m)
	}
	var feas []Trial
	for _, tr := range res.Trials {
		if tr.Outputs[2] <= 0.9 {
			feas = append(feas, tr)
		}
	}
	if want := float64(len(feas)) / float64(len(res.Trials)); *m.FeasibleFraction != want {
		t.Errorf("feasible fraction %v, want %v", *m.FeasibleFraction, want)
	}
	var front []int // brute force: f1 maximized, f2 minimized
	for _, a := range feas {
		dominated := false
		for _, b := range feas {
			if b.Outputs[0] >= a.Outputs[0] && b.Outputs[1] <= a.Outputs[1] && (b.Outputs[0] > a.Outputs[0] || b.Outputs[1] < a.Outputs[1]) {
				dominated = true
			}
		}
		if !dominated {
			front = append(front, a.ID)
		}
	}
	if len(front) != len(m.Pareto.Trials) {
		t.Fatalf("Pareto set %v, observed front %v", m.Pareto.Trials, front)
	}
	for i := range front {
		if front[i] != m.Pareto.Trials[i] || len(m.Pareto.Outputs[i]) != 3 {
			t.Fatalf("Pareto set %v, observed front %v", m.Pareto.Trials, front)
		}
	}
	// The hypervolume of a 2-d front, by the staircase, in the native
	// units (f1 up from ref[0], f2 down from ref[1]).
	var hv float64
	for _, id := range front {
		tr := res.Trials[id]
		w := tr.Outputs[0] - m.RefPoint[0]
		h := m.RefPoint[1] - tr.Outputs[1]
		if w <= 0 || h <= 0 {
			continue
		}
		// the part of this point's box not covered by points with larger f1
		top := m.RefPoint[1]
		for _, o := range front {
			if p := res.Trials[o]; p.Outputs[0] > tr.Outputs[0] {
				top = math.Min(top, p.Outputs[1])
			}
		}
		hv += w * math.Max(0, top-tr.Outputs[1])
	}
	if math.Abs(hv-*m.Hypervolume) > 1e-12*math.Max(1, hv) {
		t.Errorf("hypervolume %v, staircase %v", *m.Hypervolume, hv)
	}
}

// Driving a several-output study with Ask and TellOutputs gives the trials
// Optimize gives; AttachOutputs adds an evaluated point, and Tell and
// Attach of one value are refused.
func TestMultiOutputAskTell(t *testing.T) {
	ctx := context.Background()
	opts := Options{Acquisition: "parego", Batch: 2, Iters: 3, Init: 4, Seed: 21}
	obj := &twoObjectives{bound: 0.9}
	want, err := Optimize(ctx, obj, opts)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := obj.Info(ctx)
	s, err := NewStudy(ctx, info, opts)
	if err != nil {
		t.Fatal(err)
	}
	for !s.Done() {
		batch, err := s.Ask(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range batch {
			if err := s.Tell(ctx, tr.ID, 1, nil); err == nil || !strings.Contains(err.Error(), "TellOutputs") {
				t.Fatalf("Tell of one value: %v", err)
			}
			outs, _ := obj.EvaluateOutputs(ctx, tr.X)
			// A wrong count is the caller's mistake: refused, the trial
			// still in flight to be told right.
			if err := s.TellOutputs(ctx, tr.ID, outs[:len(outs)-1], nil); !errors.Is(err, sdk.ErrOutputCount) {
				t.Fatalf("TellOutputs of one output too few: %v, want sdk.ErrOutputCount", err)
			}
			if err := s.TellOutputs(ctx, tr.ID, outs, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := s.Trials()
	sameTrials(t, want.Trials, got)
	if _, err := s.Attach(ctx, []float64{0.5, 0.5}, 1); err == nil || !strings.Contains(err.Error(), "AttachOutputs") {
		t.Fatalf("Attach of one value: %v", err)
	}
	if _, err := s.AttachOutputs(ctx, []float64{0.5, 0.5}, []float64{1, 2}); err == nil || !strings.Contains(err.Error(), "wrong number of outputs: got 2, the objective declares 3") {
		t.Fatalf("AttachOutputs of 2 outputs: %v", err)
	}
	tr, err := s.AttachOutputs(ctx, []float64{0.5, 0.5}, []float64{-0.09, 0.09, 1})
	if err != nil || tr.Status != Complete || tr.Value != -0.09 || len(tr.Outputs) != 3 {
		t.Fatalf("AttachOutputs: %+v, %v", tr, err)
	}
}

// oneObjective is twoObjectives without f2: maximize f1 subject to
// x0 + x1 ≤ bound, the case where tes's x̄ is cEI's point.
type oneObjective struct{ twoObjectives }

func (o *oneObjective) Info(ctx context.Context) (sdk.Info, error) {
	i, _ := o.twoObjectives.Info(ctx)
	i.Name = "one"
	i.Outputs = []sdk.Output{i.Outputs[0], i.Outputs[2]}
	return i, nil
}

func (o *oneObjective) EvaluateOutputs(ctx context.Context, x []float64) ([]float64, error) {
	y, err := o.twoObjectives.EvaluateOutputs(ctx, x)
	return []float64{y[0], y[2]}, err
}

// A constrained study of the default acquisition (x̄ by cEI, whose starts
// draw on the iteration's random stream) resumes bitwise.
func TestConstrainedTESResumeExact(t *testing.T) {
	ctx := context.Background()
	opts := Options{Acquisition: "tes", Batch: 2, Iters: 4, Init: 4, Seed: 23, Grace: -1}
	mk := func() *oneObjective { return &oneObjective{twoObjectives{bound: 0.6}} }
	want, err := Optimize(ctx, mk(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := reopenAndRun(t, interruptedStudy(t, mk(), opts, 7), Options{}, mk())
	sameTrials(t, want.Trials, got)
}

// The acquisition learns whether the reference point is the user's:
// derived from the observations it moves with them, and tes's trusted
// solutions are restricted to a declared one's box only.
func TestMultiStateRefPointDeclared(t *testing.T) {
	for _, ref := range [][]float64{nil, {-2, 3}} {
		obj := &twoObjectives{bound: 10}
		info, _ := obj.Info(context.Background())
		s, err := NewStudy(context.Background(), info, Options{Init: 4, Iters: 1, Seed: 3, RefPoint: ref})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
		st, _, err := s.multiState(context.Background(), 2)
		if err != nil || st == nil {
			t.Fatalf("ref %v: state %v, %v", ref, st, err)
		}
		// f1 is maximized, f2 minimized: the oriented reference point
		// negates f2's.
		if want := ref != nil; st.RefPointDeclared != want || want && (st.RefPoint[0] != -2 || st.RefPoint[1] != -3) {
			t.Errorf("ref %v: RefPoint %v, declared %v", ref, st.RefPoint, st.RefPointDeclared)
		}
	}
}

// TestOpenStudyRevalidatesInfo: a stored study whose Info breaks a bound
// added since it was stored (here a 7th objective, past sdk.MaxObjectives)
// is refused when reopened, in one line, not run.
func TestOpenStudyRevalidatesInfo(t *testing.T) {
	ctx := context.Background()
	info := unitInfo(2)
	for k := 0; k < sdk.MaxObjectives; k++ {
		info.Outputs = append(info.Outputs, sdk.Output{Name: string(rune('a' + k)), Goal: sdk.Minimize})
	}
	db := MemoryStorage()
	s, err := NewStudy(ctx, info, Options{DB: db, Name: "six", Init: 2, Iters: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	last := `{"Name":"f","Goal":1}`
	editStoredSettings(t, db, "six", last, last+`,{"Name":"g","Goal":1}`)
	_, err = OpenStudy(ctx, db, "six", Options{})
	if err == nil || !strings.Contains(err.Error(), "7 objectives, at most 6") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("reopening a study of 7 objectives: %v", err)
	}
}

// hugeObjectives is twoObjectives with both objectives times 1e200: their
// hypervolume, a product of two ranges of order 1e200, is beyond float64.
type hugeObjectives struct{ twoObjectives }

func (o *hugeObjectives) EvaluateOutputs(ctx context.Context, x []float64) ([]float64, error) {
	v, err := o.twoObjectives.EvaluateOutputs(ctx, x)
	v[0], v[1] = 1e200*v[0], 1e200*v[1]
	return v, err
}

// A study whose hypervolume overflows runs to its end, recording a Pareto
// set and no hypervolume (null in JSON); it had failed at its first
// record ("encode record: json: unsupported value: +Inf").
func TestMultiHypervolumeOverflow(t *testing.T) {
	obj := &hugeObjectives{twoObjectives{bound: 10}}
	res, err := Optimize(context.Background(), obj, Options{Batch: 2, Iters: 2, Init: 4, Seed: 3, Grace: -1,
		OnIteration: func(r Record) {
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("record %d: %v", r.Iter, err)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Evaluations != 8 || res.Multi == nil || len(res.Multi.Pareto.Trials) == 0 || res.Multi.Hypervolume != nil {
		t.Fatalf("%d evaluations, last record %+v", res.Evaluations, res.Multi)
	}
}

// renamedObjectives is twoObjectives with its second output renamed,
// flipped or its constraint's bound moved (change selects which).
type renamedObjectives struct {
	twoObjectives
	change string
}

func (o *renamedObjectives) Info(ctx context.Context) (sdk.Info, error) {
	i, _ := o.twoObjectives.Info(ctx)
	switch o.change {
	case "name":
		i.Outputs[1].Name = "f2b"
	case "goal":
		i.Outputs[1].Goal = sdk.Maximize
	case "bound":
		i.Outputs[2].Bound = sdk.Bound(9)
	case "count":
		i.Outputs = i.Outputs[:2]
	}
	return i, nil
}

// A stored study run again with an objective whose outputs changed since
// (a renamed output, a flipped goal, a moved bound, one output fewer) is
// refused with ErrObjectiveChanged naming the output, before anything is
// evaluated; the study would have read the new values as the old ones.
func TestRunObjectiveOutputsChanged(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	orig := &twoObjectives{bound: 10}
	if _, err := Optimize(ctx, orig, Options{DB: db, Name: "s", Iters: 1, Init: 4, Seed: 1, Grace: -1}); err != nil {
		t.Fatal(err)
	}
	for change, want := range map[string]string{
		"name":  "output 1: study has f2 (minimize), objective f2b (minimize)",
		"goal":  "output 1: study has f2 (minimize), objective f2 (maximize)",
		"bound": "output 2: study has g (constraint ≤ 10), objective g (constraint ≤ 9)",
		"count": "study has 3 outputs, objective 2",
	} {
		s, err := OpenStudy(ctx, db, "s", Options{Iters: 2})
		if err != nil {
			t.Fatal(err)
		}
		obj := &renamedObjectives{twoObjectives{bound: 10}, change}
		_, err = s.Run(ctx, obj)
		s.Close()
		if !errors.Is(err, ErrObjectiveChanged) || !strings.Contains(err.Error(), want) || obj.calls.Load() != 0 {
			t.Errorf("%s: %v (%d evaluations), want %q", change, err, obj.calls.Load(), want)
		}
	}
}

func TestSameOutputsDirection(t *testing.T) {
	if err := sameOutputs(sdk.Info{Minimize: true}, sdk.Info{}); err == nil || !strings.Contains(err.Error(), "the study minimizes the value, the objective now maximizes it") {
		t.Fatalf("a flipped direction: %v", err)
	}
	if err := sameOutputs(sdk.Info{Minimize: true}, sdk.Info{Minimize: true}); err != nil {
		t.Fatal(err)
	}
}

// On a study of one value, TellOutputs and AttachOutputs are refused (they
// had recorded the trial with value 0, the unset Value), and an
// evaluation that returns outputs anyway fails with the reason.
func TestOutputsOnOneValueRefused(t *testing.T) {
	ctx := context.Background()
	info := unitInfo(2)
	s, err := NewStudy(ctx, info, Options{Init: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.Ask(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.TellOutputs(ctx, ts[0].ID, []float64{1, 2}, nil); err == nil || !strings.Contains(err.Error(), "tell it with Tell") {
		t.Errorf("TellOutputs: %v", err)
	}
	if _, err := s.AttachOutputs(ctx, []float64{0.5, 0.5}, []float64{1}); err == nil || !strings.Contains(err.Error(), "attach it with Attach") {
		t.Errorf("AttachOutputs: %v", err)
	}
	if err := s.TellResult(ctx, ts[0].ID, sdk.Result{Outputs: []float64{3}}, nil); err != nil {
		t.Fatal(err)
	}
	if tr := s.Trials()[0]; tr.Status != Failed || !strings.Contains(tr.Error, "declares none") {
		t.Errorf("a result of outputs on a study of one value: %s %q", tr.Status, tr.Error)
	}
	if err := s.Tell(ctx, ts[1].ID, 2, nil); err != nil {
		t.Fatal(err)
	}
	if tr := s.Trials()[1]; tr.Status != Complete || tr.Value != 2 {
		t.Errorf("Tell after the refusals: %s %v", tr.Status, tr.Value)
	}
}

// The acquisitions that have no form for one value are refused on such a
// study when it is made; each had fallen back to random points at every
// iteration, with only a log line to say so.
func TestOutputsOnlyAcquisitionRefused(t *testing.T) {
	for _, name := range []string{"nehvi", "parego", "cei"} {
		_, err := NewStudy(context.Background(), unitInfo(2), Options{Acquisition: name, Seed: 1})
		if err == nil || !strings.Contains(err.Error(), "optimizes objectives of several outputs") {
			t.Errorf("%s on one value: %v", name, err)
		}
	}
	// cei takes one objective (acq.OutputsChecker): two are refused too.
	two, _ := (&twoObjectives{bound: 1}).Info(context.Background())
	if _, err := NewStudy(context.Background(), two, Options{Acquisition: "cei", Seed: 1}); err == nil || !strings.Contains(err.Error(), "the study has 2 objectives") {
		t.Errorf("cei on two objectives: %v", err)
	}
}

// PES, which conditions on the GP's derivatives, is refused on a space with
// a categorical parameter (it had fallen back to random points at every
// iteration) and accepted on a continuous one.
func TestContinuousOnlyAcquisitionRefused(t *testing.T) {
	cat := unitInfo(2)
	cat.Params = append(cat.Params, sdk.Param{Name: "opt", Kind: sdk.Categorical, Choices: []string{"a", "b"}})
	_, err := NewStudy(context.Background(), cat, Options{Acquisition: "pes", Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "categorical parameter (opt)") {
		t.Errorf("pes with a categorical: %v", err)
	}
	s, err := NewStudy(context.Background(), unitInfo(2), Options{Acquisition: "pes", Seed: 1})
	if err != nil {
		t.Fatalf("pes on a continuous space: %v", err)
	}
	s.Close()
}
